//! Element-wise `f32` kernels: `add_f32`, `mul_f32` and `relu_f32`.
//!
//! The output's length sets the element count `n`; inputs must hold at least `n` elements.
//! Each workgroup handles its [`Workgroup::share_of`] of `0..n`, loading and storing one
//! element at a time, so an output bound to the same range as an input (in place) works.

use ember_kernels::builtin;
use hal_core::contract::Contract;

use crate::kernel::{Entry, F32s, Kernel, KernelError, Workgroup};

use super::util::{relu, share};

/// The `add_f32` table entry.
pub const ADD_F32: Kernel = Kernel {
    name: "add_f32",
    entry: Entry::Shared(add_f32),
};

/// The `mul_f32` table entry.
pub const MUL_F32: Kernel = Kernel {
    name: "mul_f32",
    entry: Entry::Shared(mul_f32),
};

/// The `relu_f32` table entry.
pub const RELU_F32: Kernel = Kernel {
    name: "relu_f32",
    entry: Entry::Shared(relu_f32),
};

/// `out[i] = a[i] + b[i]` for every element of `out`. Bindings: 0 `a`, 1 `b`, 2 `out`; no
/// constants.
///
/// # Errors
///
/// What [`builtin::ADD_F32`] refuses: [`KernelError::MissingBinding`] with fewer than three
/// bindings, [`KernelError::Misaligned`]
/// unless every binding starts 4-byte aligned, [`KernelError::ReadOnly`] if `out` is read-only,
/// and [`KernelError::BindingTooSmall`] if `a` or `b` holds fewer elements than `out`.
pub fn add_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    binary(wg, &builtin::ADD_F32, |x, y| x + y)
}

/// `out[i] = a[i] * b[i]` for every element of `out`. Bindings: 0 `a`, 1 `b`, 2 `out`; no
/// constants.
///
/// # Errors
///
/// As [`add_f32`] ([`builtin::MUL_F32`]).
pub fn mul_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    binary(wg, &builtin::MUL_F32, |x, y| x * y)
}

/// `out[i] = max(in[i], 0)` for every element of `out` (negatives and -0.0 become +0.0, NaN
/// stays NaN). Bindings: 0 `in`, 1 `out`; no constants.
///
/// # Errors
///
/// What [`builtin::RELU_F32`] refuses: [`KernelError::MissingBinding`] with fewer than two
/// bindings, [`KernelError::Misaligned`] unless both start 4-byte aligned,
/// [`KernelError::ReadOnly`] if `out` is read-only, and [`KernelError::BindingTooSmall`] if
/// `in` holds fewer elements than `out`.
pub fn relu_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    builtin::RELU_F32.check(wg.constants, wg.bindings)?;
    let input = wg.input_f32(0)?;
    let out = wg.output_f32(1)?;
    let n = out.len();
    map(wg, &out, n, |i| relu(input.get(i)));
    Ok(())
}

/// Checks a binary kernel's dispatch against its contract and applies `op`.
fn binary(
    wg: &Workgroup<'_>,
    contract: &Contract,
    op: impl Fn(f32, f32) -> f32,
) -> Result<(), KernelError> {
    contract.check(wg.constants, wg.bindings)?;
    let a = wg.input_f32(0)?;
    let b = wg.input_f32(1)?;
    let out = wg.output_f32(2)?;
    let n = out.len();
    map(wg, &out, n, |i| op(a.get(i), b.get(i)));
    Ok(())
}

/// Stores `value(i)` to `out[i]` for this workgroup's share of `0..n`.
#[inline]
fn map(wg: &Workgroup<'_>, out: &F32s<'_>, n: usize, value: impl Fn(usize) -> f32) {
    for i in share(wg, n) {
        out.set(i, value(i));
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::kernel::Binding;
    use crate::kernels::testutil::{f32_words, filled, read_f32, run, Aligned, Rng, GRIDS};

    const SIZES: &[usize] = &[0, 1, 7, 64, 101];

    fn check_binary(kernel: &Kernel, op: fn(f64, f64) -> f64) {
        let mut rng = Rng::new(1);
        for &grid in GRIDS {
            for &n in SIZES {
                let a = rng.vec(n + 2, -4.0, 4.0);
                let b = rng.vec(n + 1, -4.0, 4.0);
                let (wa, wb, out) = (f32_words(&a), f32_words(&b), filled(n, 0));
                let bindings = [
                    Binding::shared_words(&wa),
                    Binding::shared_words(&wb),
                    Binding::shared_words(&out),
                ];
                run(kernel, grid, &[], &bindings).unwrap();
                for (i, got) in read_f32(&out).into_iter().enumerate() {
                    // One f32 operation: exact up to the final rounding.
                    let want = op(f64::from(a[i]), f64::from(b[i])) as f32;
                    assert_eq!(got, want, "{} n {n} grid {grid:?} i {i}", kernel.name);
                }
            }
        }
    }

    #[test]
    fn add_matches_reference() {
        check_binary(&ADD_F32, |x, y| x + y);
    }

    #[test]
    fn mul_matches_reference() {
        check_binary(&MUL_F32, |x, y| x * y);
    }

    #[test]
    fn relu_matches_reference() {
        let mut rng = Rng::new(2);
        for &grid in GRIDS {
            for &n in SIZES {
                let x = rng.vec(n, -1.0, 1.0);
                let (wx, out) = (f32_words(&x), filled(n, 0x7FC0_0000));
                let b = [Binding::shared_words(&wx), Binding::shared_words(&out)];
                run(&RELU_F32, grid, &[], &b).unwrap();
                let want: Vec<f32> = x.iter().map(|&v| if v > 0.0 { v } else { 0.0 }).collect();
                assert_eq!(read_f32(&out), want, "n {n} grid {grid:?}");
            }
        }
    }

    #[test]
    fn relu_special_values() {
        let x = [
            -0.0f32,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::NAN,
            -1e-40,
            1e-40,
        ];
        let (wx, out) = (f32_words(&x), filled(x.len(), 0));
        let b = [Binding::shared_words(&wx), Binding::shared_words(&out)];
        run(&RELU_F32, [1, 1, 1], &[], &b).unwrap();
        let got = read_f32(&out);
        assert_eq!(got[0].to_bits(), 0);
        assert_eq!(got[1].to_bits(), 0);
        assert_eq!(got[2], f32::INFINITY);
        assert!(got[3].is_nan());
        assert_eq!(got[4].to_bits(), 0);
        assert_eq!(got[5], 1e-40);
    }

    #[test]
    fn in_place() {
        for &grid in GRIDS {
            let a = [1.0f32, -2.0, 3.0, -4.0, 5.0];
            let b = [10.0f32, 20.0, 30.0, 40.0, 50.0];
            let (wa, wb) = (f32_words(&a), f32_words(&b));
            // out aliases a: a = a + b, then a = a * b, then a = relu(a).
            let bind = [
                Binding::shared_words(&wa),
                Binding::shared_words(&wb),
                Binding::shared_words(&wa),
            ];
            run(&ADD_F32, grid, &[], &bind).unwrap();
            assert_eq!(read_f32(&wa), [11.0, 18.0, 33.0, 36.0, 55.0]);
            // out aliases b this time.
            let bind = [
                Binding::shared_words(&wa),
                Binding::shared_words(&wb),
                Binding::shared_words(&wb),
            ];
            run(&MUL_F32, grid, &[], &bind).unwrap();
            assert_eq!(read_f32(&wb), [110.0, 360.0, 990.0, 1440.0, 2750.0]);
            let neg = f32_words(&[-1.0, 2.0, -3.0]);
            let bind = [Binding::shared_words(&neg), Binding::shared_words(&neg)];
            run(&RELU_F32, grid, &[], &bind).unwrap();
            assert_eq!(read_f32(&neg), [0.0, 2.0, 0.0]);
        }
    }

    #[test]
    fn read_only_inputs() {
        let a = Aligned::of_f32(&[1.0, 2.0, 3.0]);
        let b = Aligned::of_f32(&[0.5, 0.25, -1.0]);
        let out = filled(3, 0);
        let bind = [
            Binding::read_only(a.bytes()),
            Binding::read_only(b.bytes()),
            Binding::shared_words(&out),
        ];
        run(&MUL_F32, [2, 1, 1], &[], &bind).unwrap();
        assert_eq!(read_f32(&out), [0.5, 0.5, -3.0]);
    }

    #[test]
    fn errors() {
        let long = filled(8, 0);
        let short = filled(5, 0);
        let out = filled(6, 0);
        for (kernel, short_index) in [(&ADD_F32, 0u32), (&MUL_F32, 1)] {
            let mut bind = [
                Binding::shared_words(&long),
                Binding::shared_words(&long),
                Binding::shared_words(&out),
            ];
            bind[short_index as usize] = Binding::shared_words(&short);
            assert_eq!(
                run(kernel, [3, 1, 1], &[], &bind),
                Err(KernelError::BindingTooSmall {
                    index: short_index,
                    len: 20,
                    needed: 24
                })
            );
            assert_eq!(
                run(kernel, [1, 1, 1], &[], &bind[..2]),
                Err(KernelError::MissingBinding { index: 2, bound: 2 })
            );
        }
        assert_eq!(
            run(
                &RELU_F32,
                [2, 2, 1],
                &[],
                &[Binding::shared_words(&short), Binding::shared_words(&out)]
            ),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 20,
                needed: 24
            })
        );
        assert!(read_f32(&out).iter().all(|&v| v == 0.0));
        let ro = Aligned::of_f32(&[0.0; 4]);
        assert_eq!(
            run(
                &RELU_F32,
                [1, 1, 1],
                &[],
                &[Binding::shared_words(&long), Binding::read_only(ro.bytes())]
            ),
            Err(KernelError::ReadOnly { index: 1 })
        );
        assert_eq!(
            run(
                &ADD_F32,
                [1, 1, 1],
                &[],
                &[
                    Binding::shared_words(&long),
                    Binding::read_only(ro.misaligned()),
                    Binding::shared_words(&out)
                ]
            ),
            Err(KernelError::Misaligned {
                index: 1,
                alignment: 4
            })
        );
    }
}
