//! `copy_u32`: copies whole 32-bit words from one binding to another.

use ember_kernels::builtin;

use crate::kernel::{Entry, Kernel, KernelError, Workgroup};

use super::util::{load_word, share, store_word};

/// The `copy_u32` table entry.
pub const COPY_U32: Kernel = Kernel {
    name: "copy_u32",
    entry: Entry::Shared(copy_u32),
};

/// Copies the first `n` 4-byte words of binding 0 (source) to binding 1 (destination), where
/// `n` is the number of whole words in the destination; a trailing partial destination word
/// is left alone. No constants. Each workgroup copies its [`Workgroup::share_of`] of the
/// words, bit for bit.
///
/// The source may be read-only. Source and destination may be the same range (nothing
/// changes) but must not otherwise overlap: with several workgroups the result of a partial
/// overlap is unspecified.
///
/// # Errors
///
/// What [`builtin::COPY_U32`] refuses: [`KernelError::MissingBinding`] with fewer than
/// two bindings, [`KernelError::Misaligned`] unless both start 4-byte aligned, [`KernelError::ReadOnly`] if the destination is
/// read-only, and [`KernelError::BindingTooSmall`] (on binding 0, needing `4 * n` bytes) if
/// the source holds fewer than `n` words.
pub fn copy_u32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    builtin::COPY_U32.check(wg.constants, wg.bindings)?;
    let src = wg.input_f32(0)?;
    let dst = wg.output_f32(1)?;
    let n = dst.len();
    for i in share(wg, n) {
        store_word(&dst, i, load_word(&src, i));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::kernel::Binding;
    use crate::kernels::testutil::{filled, grids, read_u32, run, u32_words, Aligned};

    #[test]
    fn copies_destination_length_on_every_grid() {
        for &grid in grids() {
            for n in [0usize, 1, 6, 65] {
                // Source longer than the destination; includes a signalling-NaN pattern.
                let values: Vec<u32> = (0..n as u32 + 3).map(|i| 0x7F80_0001 ^ i).collect();
                let src = u32_words(&values);
                let dst = filled(n, 0xDEAD_BEEF);
                let b = [Binding::shared_words(&src), Binding::shared_words(&dst)];
                run(&COPY_U32, grid, &[], &b).unwrap();
                assert_eq!(read_u32(&dst), values[..n], "n {n} grid {grid:?}");
            }
        }
    }

    #[test]
    fn copies_from_read_only() {
        let values = [1.5f32, -2.0, f32::INFINITY, 0.25, 7.0];
        let src = Aligned::of_f32(&values);
        let dst = filled(5, 0);
        let b = [Binding::read_only(src.bytes()), Binding::shared_words(&dst)];
        run(&COPY_U32, [2, 2, 1], &[], &b).unwrap();
        let want: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(read_u32(&dst), want);
    }

    #[test]
    fn in_place_is_a_no_op() {
        let values = [3u32, 1, 4, 1, 5];
        let buf = u32_words(&values);
        let b = [Binding::shared_words(&buf), Binding::shared_words(&buf)];
        run(&COPY_U32, [3, 1, 1], &[], &b).unwrap();
        assert_eq!(read_u32(&buf), values);
    }

    #[test]
    fn errors() {
        let short = filled(3, 0);
        let dst = filled(4, 0);
        assert_eq!(
            run(
                &COPY_U32,
                [2, 1, 1],
                &[],
                &[Binding::shared_words(&short), Binding::shared_words(&dst)]
            ),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 12,
                needed: 16
            })
        );
        assert!(read_u32(&dst).iter().all(|&w| w == 0));
        assert_eq!(
            run(&COPY_U32, [1, 1, 1], &[], &[Binding::shared_words(&dst)]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        let ro = Aligned::of_f32(&[0.0; 4]);
        assert_eq!(
            run(
                &COPY_U32,
                [1, 1, 1],
                &[],
                &[Binding::shared_words(&dst), Binding::read_only(ro.bytes())]
            ),
            Err(KernelError::ReadOnly { index: 1 })
        );
        assert_eq!(
            run(
                &COPY_U32,
                [1, 1, 1],
                &[],
                &[
                    Binding::read_only(ro.misaligned()),
                    Binding::shared_words(&dst)
                ]
            ),
            Err(KernelError::Misaligned {
                index: 0,
                alignment: 4
            })
        );
        let src = filled(4, 0);
        assert_eq!(
            run(
                &COPY_U32,
                [1, 1, 1],
                &[],
                &[Binding::shared_words(&src), Binding::unaligned(2, 16, true)]
            ),
            Err(KernelError::Misaligned {
                index: 1,
                alignment: 4
            })
        );
    }
}
