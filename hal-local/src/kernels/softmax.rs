//! `softmax_f32`: numerically stable softmax over each row of a matrix, with TFLite's `beta`
//! (the float SOFTMAX op lowers to it).

use ember_kernels::builtin;

use crate::kernel::{Entry, Kernel, KernelError, Workgroup};

use super::math::exp_f32;
use super::util::share;

/// The `softmax_f32` table entry.
pub const SOFTMAX_F32: Kernel = Kernel {
    name: "softmax_f32",
    entry: Entry::Shared(softmax_f32),
};

/// Row-wise softmax of a `rows × cols` row-major matrix:
/// `out[r][c] = e^((in[r][c] - m)·beta) / Σ_j e^((in[r][j] - m)·beta)` with `m` the row's
/// maximum (so for `beta > 0` no exponential overflows and the largest term is exactly 1).
///
/// Constants: 0 `rows`, 1 `cols`, 2 `beta` (`f32` bits; optional, 1.0 when absent).
/// Bindings: 0 `in` (`rows * cols` elements), 1 `out` (`rows * cols` elements). Each
/// workgroup handles its [`Workgroup::share_of`] of the rows. `out` may be bound to the same
/// range as `in` (in place): each row is read before it is overwritten, and rows are
/// disjoint.
///
/// Per row, as TFLite's `reference_ops::Softmax<float>` (and `mlp_softmax_f32`'s softmax):
/// the maximum (NaN skipped), each `e = exp_f32((x - m)·beta)` stored and summed left to
/// right from 0.0, then each stored `e` divided by the sum. `exp_f32` is within an ulp or so
/// of `e^x`; with `beta` 1.0 the product is exact, so the result is that of the plain
/// max-subtracted softmax. A row holding NaN, `+inf`, or nothing but `-inf` comes out as
/// NaN, as does every row when `beta` is not finite (the importer passes only finite ones).
///
/// # Errors
///
/// What [`builtin::SOFTMAX_F32`] refuses: [`KernelError::MissingConstants`] with fewer than
/// two constants (any `beta` is accepted), [`KernelError::Shape`]
/// if `rows` or `cols` is 0 or the matrix's size in bytes overflows,
/// [`KernelError::MissingBinding`] with fewer than two bindings, [`KernelError::Misaligned`]
/// unless both start 4-byte aligned, [`KernelError::ReadOnly`] if `out` is read-only, and
/// [`KernelError::BindingTooSmall`] (needing `4 * rows * cols` bytes) if either is too short.
pub fn softmax_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    let [rows, cols, beta, ..] = builtin::SOFTMAX_F32
        .check(wg.constants, wg.bindings)?
        .constants;
    let beta = f32::from_bits(beta);
    let input = wg.input_f32(0)?;
    let out = wg.output_f32(1)?;
    // Both fit `usize`: their product does (the contract checked) and neither is zero.
    let (rows, cols) = (rows as usize, cols as usize);
    for row in share(wg, rows) {
        let base = row * cols;
        let span = base..base + cols;
        let max = span
            .clone()
            .fold(f32::NEG_INFINITY, |m, i| m.max(input.get(i)));
        // Store the exponentials first (read `in[i]`, then write `out[i]`: safe in place) ...
        let mut sum = 0.0f32;
        for i in span.clone() {
            let e = exp_f32((input.get(i) - max) * beta);
            sum += e;
            out.set(i, e);
        }
        // ... then normalise them. Dividing (not multiplying by 1/sum) keeps each result
        // within an ulp or so of the exact quotient; sum >= 1 as the max term is e^0.
        for i in span {
            out.set(i, out.get(i) / sum);
        }
    }
    Ok(())
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

    fn reference(x: &[f32], rows: usize, cols: usize) -> Vec<f64> {
        reference_beta(x, rows, cols, 1.0)
    }

    fn reference_beta(x: &[f32], rows: usize, cols: usize, beta: f32) -> Vec<f64> {
        let beta = f64::from(beta);
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let m = row
                .iter()
                .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let e = |v: f32| ((f64::from(v) - m) * beta).exp();
            let sum: f64 = row.iter().map(|&v| e(v)).sum();
            out.extend(row.iter().map(|&v| e(v) / sum));
        }
        out
    }

    fn check(rows: usize, cols: usize, lo: f32, hi: f32, grid: [u32; 3], seed: u64) {
        let x = Rng::new(seed).vec(rows * cols, lo, hi);
        let (wx, out) = (f32_words(&x), filled(rows * cols, 0x7FC0_0000));
        let b = [Binding::shared_words(&wx), Binding::shared_words(&out)];
        run(&SOFTMAX_F32, grid, &[rows as u32, cols as u32], &b).unwrap();
        let got = read_f32(&out);
        let want = reference(&x, rows, cols);
        for r in 0..rows {
            let row = &got[r * cols..(r + 1) * cols];
            let sum: f64 = row.iter().map(|&v| f64::from(v)).sum();
            assert!((sum - 1.0).abs() < 1e-5, "row {r} sums to {sum}");
            for (c, (&g, &w)) in row.iter().zip(&want[r * cols..]).enumerate() {
                assert!(
                    (f64::from(g) - w).abs() <= 1e-6,
                    "{rows}x{cols} grid {grid:?} [{r}][{c}]: {g} vs {w}"
                );
            }
        }
    }

    #[test]
    fn matches_reference_on_every_grid() {
        for &grid in grids() {
            for (rows, cols) in [(1, 1), (1, 5), (3, 7), (5, 1), (8, 33)] {
                check(rows, cols, -5.0, 5.0, grid, (rows * 31 + cols) as u64);
            }
        }
    }

    #[test]
    fn large_and_spread_inputs() {
        // Huge logits would overflow a naive exp; a wide spread underflows most terms.
        check(4, 16, 1000.0, 1100.0, [2, 1, 1], 7);
        check(4, 16, -1e4, 1e4, [3, 1, 1], 8);
        check(2, 50, -30.0, 30.0, [1, 1, 1], 9);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn long_rows() {
        check(3, 1000, -10.0, 10.0, [2, 1, 1], 10);
        check(40, 64, -3.0, 3.0, [4, 2, 1], 11);
    }

    #[test]
    fn in_place_and_read_only_input() {
        let x = [1.0f32, 2.0, 3.0, -1.0, 0.0, 1.0];
        let want = reference(&x, 2, 3);
        let buf = f32_words(&x);
        let b = [Binding::shared_words(&buf), Binding::shared_words(&buf)];
        run(&SOFTMAX_F32, [2, 1, 1], &[2, 3], &b).unwrap();
        for (g, w) in read_f32(&buf).into_iter().zip(&want) {
            assert!((f64::from(g) - w).abs() <= 1e-6);
        }
        let ro = Aligned::of_f32(&x);
        let out = filled(6, 0);
        let b = [Binding::read_only(ro.bytes()), Binding::shared_words(&out)];
        run(&SOFTMAX_F32, [1, 1, 1], &[2, 3], &b).unwrap();
        for (g, w) in read_f32(&out).into_iter().zip(&want) {
            assert!((f64::from(g) - w).abs() <= 1e-6);
        }
    }

    #[test]
    fn beta_scales_the_differences() {
        let x = Rng::new(12).vec(3 * 9, -4.0, 4.0);
        for beta in [0.0f32, 0.25, 1.0, 2.5] {
            let (wx, out) = (f32_words(&x), filled(27, 0x7FC0_0000));
            let b = [Binding::shared_words(&wx), Binding::shared_words(&out)];
            run(&SOFTMAX_F32, [2, 1, 1], &[3, 9, beta.to_bits()], &b).unwrap();
            let want = reference_beta(&x, 3, 9, beta);
            for (g, w) in read_f32(&out).into_iter().zip(&want) {
                assert!((f64::from(g) - w).abs() <= 1e-6, "beta {beta}: {g} vs {w}");
            }
        }
        // beta 1.0 given is beta left out, bit for bit.
        let (wx, given, absent) = (f32_words(&x), filled(27, 0), filled(27, 0));
        let b = [Binding::shared_words(&wx), Binding::shared_words(&given)];
        run(&SOFTMAX_F32, [1, 1, 1], &[3, 9, 1.0f32.to_bits()], &b).unwrap();
        let b = [Binding::shared_words(&wx), Binding::shared_words(&absent)];
        run(&SOFTMAX_F32, [1, 1, 1], &[3, 9], &b).unwrap();
        assert_eq!(read_u32(&given), read_u32(&absent));
    }

    #[test]
    fn special_rows() {
        let x = [
            0.0f32,
            f32::NEG_INFINITY,
            0.0, // -inf gets exactly 0
            f32::NAN,
            1.0,
            2.0, // NaN poisons its row
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ];
        let (wx, out) = (f32_words(&x), filled(9, 0));
        let b = [Binding::shared_words(&wx), Binding::shared_words(&out)];
        run(&SOFTMAX_F32, [3, 1, 1], &[3, 3], &b).unwrap();
        let got = read_f32(&out);
        assert_eq!(got[..3], [0.5, 0.0, 0.5]);
        assert!(got[3..].iter().all(|v| v.is_nan()));
    }

    #[test]
    fn errors() {
        let x = filled(6, 0);
        let out = filled(6, 0);
        let short = filled(5, 0);
        let ok = [Binding::shared_words(&x), Binding::shared_words(&out)];
        assert_eq!(
            run(&SOFTMAX_F32, [1, 1, 1], &[2], &ok),
            Err(KernelError::MissingConstants {
                needed: 2,
                given: 1
            })
        );
        for shape in [[0, 3], [2, 0], [0, 0]] {
            assert!(matches!(
                run(&SOFTMAX_F32, [2, 1, 1], &shape, &ok),
                Err(KernelError::Shape(_))
            ));
        }
        // The size in bytes overflows u64.
        assert!(matches!(
            run(&SOFTMAX_F32, [1, 1, 1], &[u32::MAX, u32::MAX], &ok),
            Err(KernelError::Shape(_))
        ));
        // 2^34 bytes: past a 32-bit address space; on 64-bit the binding is too small.
        let big = run(&SOFTMAX_F32, [1, 1, 1], &[1 << 16, 1 << 16], &ok);
        if usize::BITS < 64 {
            assert!(matches!(big, Err(KernelError::Shape(_))));
        } else {
            assert_eq!(
                big,
                Err(KernelError::BindingTooSmall {
                    index: 0,
                    len: 24,
                    needed: 1 << 34
                })
            );
        }
        for (bind, index) in [
            (
                [Binding::shared_words(&short), Binding::shared_words(&out)],
                0,
            ),
            (
                [Binding::shared_words(&x), Binding::shared_words(&short)],
                1,
            ),
        ] {
            assert_eq!(
                run(&SOFTMAX_F32, [3, 1, 1], &[2, 3], &bind),
                Err(KernelError::BindingTooSmall {
                    index,
                    len: 20,
                    needed: 24
                })
            );
        }
        assert_eq!(
            run(&SOFTMAX_F32, [1, 1, 1], &[2, 3], &ok[..1]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        let ro = Aligned::of_f32(&[0.0; 6]);
        assert_eq!(
            run(
                &SOFTMAX_F32,
                [1, 1, 1],
                &[2, 3],
                &[Binding::shared_words(&x), Binding::read_only(ro.bytes())]
            ),
            Err(KernelError::ReadOnly { index: 1 })
        );
        assert!(read_f32(&out).iter().all(|&v| v == 0.0));
    }
}
