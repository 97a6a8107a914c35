//! `fill_u32`: writes one 32-bit pattern to every word of a binding.

use ember_kernels::builtin;

use crate::kernel::{Entry, Kernel, KernelError, Workgroup};

use super::util::{share, store_word};

/// The `fill_u32` table entry.
pub const FILL_U32: Kernel = Kernel {
    name: "fill_u32",
    entry: Entry::Shared(fill_u32),
};

/// Writes constant 0 (`value`) to every whole 4-byte word of binding 0; a trailing partial
/// word is left alone. Each workgroup writes its [`Workgroup::share_of`] of the words.
///
/// The bits are stored as they are (no trip through a float register).
///
/// # Errors
///
/// What [`builtin::FILL_U32`] refuses: [`KernelError::MissingConstants`] without constant
/// 0, [`KernelError::MissingBinding`] without binding 0, [`KernelError::ReadOnly`] if it is
/// read-only, and [`KernelError::Misaligned`] unless its start is 4-byte aligned.
pub fn fill_u32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    let [value, ..] = builtin::FILL_U32
        .check(wg.constants, wg.bindings)?
        .constants;
    let out = wg.output_f32(0)?;
    for i in share(wg, out.len()) {
        store_word(&out, i, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::kernel::Binding;
    use crate::kernels::testutil::{filled, grids, read_u32, run, Aligned};

    #[test]
    fn fills_every_word_on_every_grid() {
        for &grid in grids() {
            for n in [0usize, 1, 5, 64, 67] {
                let out = filled(n, 0);
                // A signalling-NaN pattern must survive bit for bit.
                let value = 0x7F80_0001;
                run(&FILL_U32, grid, &[value], &[Binding::shared_words(&out)]).unwrap();
                assert!(
                    read_u32(&out).iter().all(|&w| w == value),
                    "n {n} grid {grid:?}"
                );
            }
        }
    }

    #[test]
    fn leaves_a_trailing_partial_word() {
        let out = filled(2, 0);
        let binding = Binding::words(&out, 7, true);
        run(&FILL_U32, [2, 1, 1], &[0xA5A5_A5A5], &[binding]).unwrap();
        assert_eq!(read_u32(&out), [0xA5A5_A5A5, 0]);
    }

    #[test]
    fn errors() {
        let out = filled(4, 0);
        let b = [Binding::shared_words(&out)];
        assert_eq!(
            run(&FILL_U32, [1, 1, 1], &[], &b),
            Err(KernelError::MissingConstants {
                needed: 1,
                given: 0
            })
        );
        assert_eq!(
            run(&FILL_U32, [2, 1, 1], &[1], &[]),
            Err(KernelError::MissingBinding { index: 0, bound: 0 })
        );
        let ro = Aligned::of_f32(&[0.0; 4]);
        assert_eq!(
            run(
                &FILL_U32,
                [1, 1, 1],
                &[1],
                &[Binding::read_only(ro.bytes())]
            ),
            Err(KernelError::ReadOnly { index: 0 })
        );
        assert_eq!(
            run(
                &FILL_U32,
                [1, 1, 1],
                &[1],
                &[Binding::unaligned(2, 16, true)]
            ),
            Err(KernelError::Misaligned {
                index: 0,
                alignment: 4
            })
        );
    }
}
