//! Element-wise `f32` kernels: `add_f32`, `mul_f32` and `relu_f32`.
//!
//! The output's length sets the element count `n`; inputs must hold at least `n` elements.
//! Each workgroup handles its [`Workgroup::share_of`] of `0..n`, loading and storing one
//! element at a time, so an output bound to the same range as an input (in place) works.
//! `add_f32` and `mul_f32` given constants are TFLite's float ADD and MUL instead
//! (broadcasting, clamped): the output's elements are still split over the workgroups and
//! computed one at a time.

use ember_kernels::add::Add;
use ember_kernels::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use ember_kernels::mul::Mul;
use ember_kernels::{builtin, KernelParams, Words};
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
/// Given constants, TFLite's float ADD: the words of [`AddF32`] (the inputs' shapes, which
/// broadcast, and the clamp range), `out[e] = clamp(a[i] + b[j])` for every output element
/// `e` and the input elements `i`, `j` it broadcasts from. Without broadcasting the output
/// may be an input.
///
/// # Errors
///
/// Without constants, what [`builtin::ADD_F32`] refuses: [`KernelError::MissingBinding`]
/// with fewer than three bindings, [`KernelError::Misaligned`] unless every binding starts
/// 4-byte aligned, [`KernelError::ReadOnly`] if `out` is read-only, and
/// [`KernelError::BindingTooSmall`] if `a` or `b` holds fewer elements than `out`. With
/// constants, what [`AddF32`]'s `decode` and `check` refuse, then each binding's absence,
/// misalignment or (`out`) read-only access, in binding order.
///
/// [`AddF32`]: ember_kernels::add::AddF32
pub fn add_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    binary::<Add>(wg, &builtin::ADD_F32)
}

/// `out[i] = a[i] * b[i]` for every element of `out`. Bindings: 0 `a`, 1 `b`, 2 `out`; no
/// constants.
///
/// Given constants, TFLite's float MUL: the words of [`MulF32`] (the inputs' shapes, which
/// broadcast, and the clamp range), `out[e] = clamp(a[i] * b[j])` for every output element
/// `e` and the input elements `i`, `j` it broadcasts from. Without broadcasting the output
/// may be an input.
///
/// # Errors
///
/// As [`add_f32`] ([`builtin::MUL_F32`] without constants, [`MulF32`] with them).
///
/// [`MulF32`]: ember_kernels::mul::MulF32
pub fn mul_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    binary::<Mul>(wg, &builtin::MUL_F32)
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

/// A float binary kernel whose element is `F::apply`: without constants checked against
/// `contract` and applied element-wise over the output's length; given constants, TFLite's
/// op ([`BroadcastF32<F>`]'s words), broadcast and clamped.
fn binary<F: BinaryFunctionF32>(
    wg: &Workgroup<'_>,
    contract: &Contract,
) -> Result<(), KernelError> {
    if wg.constants.is_empty() {
        contract.check(wg.constants, wg.bindings)?;
        let a = wg.input_f32(0)?;
        let b = wg.input_f32(1)?;
        let out = wg.output_f32(2)?;
        let n = out.len();
        map(wg, &out, n, |i| F::apply(a.get(i), b.get(i)));
        return Ok(());
    }
    let params = BroadcastF32::<F>::decode(&mut Words::new(wg.constants))?;
    let lens: heapless::Vec<usize, 3> = wg
        .bindings
        .iter()
        .take(3)
        .map(|binding| binding.len())
        .collect();
    params.check(&lens)?;
    let a = wg.input_f32(0)?;
    let b = wg.input_f32(1)?;
    let out = wg.output_f32(2)?;
    let shape = params.shape;
    if shape.is_elementwise() {
        map(wg, &out, shape.len(), |e| {
            params.element(a.get(e), b.get(e))
        });
    } else {
        map(wg, &out, shape.len(), |e| {
            let (i, j) = shape.input_indices(e);
            params.element(a.get(i), b.get(j))
        });
    }
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
    use crate::kernels::testutil::{
        f32_words, filled, grids, read_f32, read_u32, run, Aligned, Rng,
    };

    const SIZES: &[usize] = &[0, 1, 7, 64, 101];

    fn check_binary(kernel: &Kernel, op: fn(f64, f64) -> f64) {
        let mut rng = Rng::new(1);
        for &grid in grids() {
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
        for &grid in grids() {
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
        for &grid in grids() {
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

    /// `kernel` given [`BroadcastF32<F>`]'s words: ember-kernels' float op, bit for bit, on
    /// every grid; in place without broadcasting; refused as the op refuses, then the
    /// bindings in order.
    fn broadcasts_given_words<F: BinaryFunctionF32>(kernel: &Kernel) {
        use ember_kernels::broadcast::BroadcastShape;
        let mut rng = Rng::new(3);
        let shapes: &[(&[usize], &[usize])] = &[
            (&[2, 3], &[2, 3]),
            (&[4, 1, 3], &[5, 1]),
            (&[1, 4], &[3, 1]),
            (&[7], &[1]),
            (&[1], &[2, 2, 2]),
        ];
        for (sa, sb) in shapes {
            let shape = BroadcastShape::new(sa, sb).unwrap();
            let params = BroadcastF32::<F>::new(shape, -3.0, 2.5);
            let mut words = Vec::new();
            params.encode(&mut words);
            let n = |d: &[usize]| d.iter().product::<usize>();
            let a = rng.vec(n(sa), -4.0, 4.0);
            let b = rng.vec(n(sb), -4.0, 4.0);
            let mut want = std::vec![0.0f32; shape.len()];
            params.run(&a, &b, &mut want).unwrap();
            for &grid in grids() {
                let (wa, wb) = (f32_words(&a), f32_words(&b));
                let out = filled(shape.len() + 1, 0x7FC0_0000);
                let bind = [
                    Binding::shared_words(&wa),
                    Binding::shared_words(&wb),
                    Binding::shared_words(&out),
                ];
                run(kernel, grid, &words, &bind).unwrap();
                let got = read_u32(&out);
                let bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
                assert_eq!(
                    got[..shape.len()],
                    bits,
                    "{} {sa:?} {sb:?} grid {grid:?}",
                    kernel.name
                );
                assert_eq!(got[shape.len()], 0x7FC0_0000);
                if shape.is_elementwise() {
                    let bind = [
                        Binding::shared_words(&wa),
                        Binding::shared_words(&wb),
                        Binding::shared_words(&wa),
                    ];
                    run(kernel, grid, &words, &bind).unwrap();
                    assert_eq!(
                        read_u32(&wa),
                        bits,
                        "{} in place {sa:?} grid {grid:?}",
                        kernel.name
                    );
                }
            }
        }
        // Refused as the op refuses, then the bindings in order.
        let params =
            BroadcastF32::<F>::new(BroadcastShape::new(&[2], &[2]).unwrap(), f32::MIN, f32::MAX);
        let mut words = Vec::new();
        params.encode(&mut words);
        let (two, one) = (filled(2, 0), filled(1, 0));
        let ro = Aligned::of_f32(&[0.0; 2]);
        let shared = Binding::shared_words;
        assert_eq!(
            run(
                kernel,
                [1, 1, 1],
                &words[..5],
                &[shared(&two), shared(&two), shared(&two)]
            ),
            Err(KernelError::MissingConstants {
                needed: 6,
                given: 5
            })
        );
        assert_eq!(
            run(
                kernel,
                [1, 1, 1],
                &words,
                &[shared(&two), shared(&one), shared(&two)]
            ),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 4,
                needed: 8
            })
        );
        assert_eq!(
            run(
                kernel,
                [1, 1, 1],
                &words,
                &[shared(&two), shared(&two), Binding::read_only(ro.bytes())]
            ),
            Err(KernelError::ReadOnly { index: 2 })
        );
    }

    /// `add_f32` given `AddF32`'s words: ember-kernels' float ADD.
    #[test]
    fn add_broadcasts_given_words() {
        broadcasts_given_words::<Add>(&ADD_F32);
    }

    /// `mul_f32` given `MulF32`'s words: ember-kernels' float MUL.
    #[test]
    fn mul_broadcasts_given_words() {
        broadcasts_given_words::<Mul>(&MUL_F32);
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
