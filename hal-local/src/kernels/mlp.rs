//! `mlp_softmax_f32`: a one-hidden-layer perceptron classifier in one dispatch.

use ember_kernels::builtin::{self, MLP_MAX_WIDTH};

use crate::kernel::{Entry, F32s, Kernel, KernelError, Workgroup};

use super::math::exp_f32;
use super::util::{relu, share};

/// The `mlp_softmax_f32` table entry.
pub const MLP_SOFTMAX_F32: Kernel = Kernel {
    name: "mlp_softmax_f32",
    entry: Entry::Shared(mlp_softmax_f32),
};

/// The most hidden units and outputs ([`builtin::MLP_MAX_WIDTH`]).
const WIDTH: usize = MLP_MAX_WIDTH as usize;

/// Columns of a weight row read into locals at once.
const CHUNK: usize = 64;

/// Per row of `x`: `y = softmax(relu(x·w1 + b1)·w2 + b2)`, exactly what `matmul_f32` with
/// bias and ReLU, `matmul_f32` with bias, then `softmax_f32` give through two transients.
///
/// Constants: 0 `M` (rows), 1 `K` (inputs), 2 `H` (hidden units, at most
/// [`builtin::MLP_MAX_WIDTH`]), 3 `N` (outputs, as many at most). Bindings, row-major
/// `f32`: 0 `x` (`M × K`), 1 `w1` (`K × H`), 2 `b1` (`H`), 3 `w2` (`H × N`), 4 `b2` (`N`),
/// 5 `y` (`M × N`, written). Each workgroup handles its [`Workgroup::share_of`] of the rows.
///
/// Each hidden unit and logit is the sum over its inputs in increasing order, in `f32`,
/// starting from 0.0, then its bias (then ReLU for a hidden unit); the softmax is
/// `softmax_f32`'s (max, exponentials summed left to right, each divided by the sum). The
/// hidden layer and logits of a row live on the stack (2 KiB each).
///
/// `y` must not share memory with the inputs (the result would be unspecified, though
/// memory-safe).
///
/// # Errors
///
/// What [`builtin::MLP_SOFTMAX_F32`] refuses: [`KernelError::MissingConstants`] with fewer
/// than four constants, [`KernelError::Shape`] if a dimension is 0, `H` or `N` is above the
/// width limit, or a matrix's size in bytes overflows; [`KernelError::MissingBinding`],
/// [`KernelError::Misaligned`], [`KernelError::ReadOnly`] if `y` is read-only, and
/// [`KernelError::BindingTooSmall`] naming the bytes needed.
pub fn mlp_softmax_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    let [m, k, h, n] = builtin::MLP_SOFTMAX_F32
        .check(wg.constants, wg.bindings)?
        .constants;
    // The contract checked every matrix's size fits `usize`, and `h`, `n` are at most WIDTH.
    let (m, k, h, n) = (m as usize, k as usize, h as usize, n as usize);
    let x = wg.input_f32(0)?;
    let w1 = wg.input_f32(1)?;
    let b1 = wg.input_f32(2)?;
    let w2 = wg.input_f32(3)?;
    let b2 = wg.input_f32(4)?;
    let y = wg.output_f32(5)?;
    let mut hidden = [0.0f32; WIDTH];
    let mut logits = [0.0f32; WIDTH];
    for row in share(wg, m) {
        let hidden = &mut hidden[..h];
        let logits = &mut logits[..n];
        dense(|i| x.get(row * k + i), k, &w1, &b1, hidden);
        for v in hidden.iter_mut() {
            *v = relu(*v);
        }
        dense(|i| hidden[i], h, &w2, &b2, logits);
        softmax(logits);
        y.write_from(row * n, logits);
    }
    Ok(())
}

/// `out[j] = Σ_i input(i)·w[i][j] + b[j]` over `i < depth` in increasing order, from 0.0,
/// for `w` row-major with `out.len()` columns. Rows of `w` are read a chunk at a time.
fn dense(input: impl Fn(usize) -> f32, depth: usize, w: &F32s<'_>, b: &F32s<'_>, out: &mut [f32]) {
    let width = out.len();
    out.fill(0.0);
    let mut block = [0.0f32; CHUNK];
    for i in 0..depth {
        let a = input(i);
        for (c, acc) in out.chunks_mut(CHUNK).enumerate() {
            let block = &mut block[..acc.len()];
            w.read_into(i * width + c * CHUNK, block);
            for (o, &wij) in acc.iter_mut().zip(block.iter()) {
                *o += a * wij;
            }
        }
    }
    for (j, o) in out.iter_mut().enumerate() {
        *o += b.get(j);
    }
}

/// `softmax_f32`'s row, in place.
fn softmax(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v = exp_f32(*v - max);
        sum += *v;
    }
    for v in row.iter_mut() {
        *v /= sum;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::kernel::Binding;
    use crate::kernels::matmul::{FLAG_BIAS, FLAG_RELU, MATMUL_F32};
    use crate::kernels::softmax::SOFTMAX_F32;
    use crate::kernels::testutil::{f32_words, filled, read_u32, run, Rng, GRIDS};

    /// The same row through `matmul_f32`, `matmul_f32`, `softmax_f32`, as words.
    fn three_kernels(
        [m, k, h, n]: [usize; 4],
        x: &[f32],
        w1: &[f32],
        b1: &[f32],
        w2: &[f32],
        b2: &[f32],
    ) -> Vec<u32> {
        let (hidden, logits, out) = (filled(m * h, 0), filled(m * n, 0), filled(m * n, 0));
        let (x, w1, b1, w2, b2) = (
            f32_words(x),
            f32_words(w1),
            f32_words(b1),
            f32_words(w2),
            f32_words(b2),
        );
        let words = Binding::shared_words;
        let dims = |a: usize, b: usize, c: usize, f: u32| [a as u32, b as u32, c as u32, f];
        run(
            &MATMUL_F32,
            [1, 1, 1],
            &dims(m, k, h, FLAG_BIAS | FLAG_RELU),
            &[words(&x), words(&w1), words(&hidden), words(&b1)],
        )
        .unwrap();
        run(
            &MATMUL_F32,
            [1, 1, 1],
            &dims(m, h, n, FLAG_BIAS),
            &[words(&hidden), words(&w2), words(&logits), words(&b2)],
        )
        .unwrap();
        run(
            &SOFTMAX_F32,
            [1, 1, 1],
            &[m as u32, n as u32],
            &[words(&logits), words(&out)],
        )
        .unwrap();
        read_u32(&out)
    }

    #[test]
    fn equals_the_three_kernels_bit_for_bit_on_every_grid() {
        let mut rng = Rng::new(11);
        let shapes: &[[usize; 4]] = &[
            [1, 1, 1, 1],
            [1, 64, 32, 10],
            [3, 7, 5, 2],
            [5, 65, 70, 3],
            [2, 3, 129, 64],
            [4, 2, 512, 512],
        ];
        // Miri takes the small shapes on three grids.
        let (shapes, grids) = if cfg!(miri) {
            (&shapes[..3], &GRIDS[..3])
        } else {
            (shapes, GRIDS)
        };
        for &dims in shapes {
            let [m, k, h, n] = dims;
            let x = rng.vec(m * k, -1.0, 1.0);
            let w1 = rng.vec(k * h, -1.0, 1.0);
            let b1 = rng.vec(h, -0.5, 0.5);
            let w2 = rng.vec(h * n, -1.0, 1.0);
            let b2 = rng.vec(n, -0.5, 0.5);
            let want = three_kernels(dims, &x, &w1, &b1, &w2, &b2);
            for &grid in grids {
                let (wx, ww1, wb1, ww2, wb2) = (
                    f32_words(&x),
                    f32_words(&w1),
                    f32_words(&b1),
                    f32_words(&w2),
                    f32_words(&b2),
                );
                // One word past the end must stay untouched.
                let y = filled(m * n + 1, 0x7FC0_0000);
                let words = Binding::shared_words;
                let bind = [
                    words(&wx),
                    words(&ww1),
                    words(&wb1),
                    words(&ww2),
                    words(&wb2),
                    words(&y),
                ];
                let constants = dims.map(|d| d as u32);
                run(&MLP_SOFTMAX_F32, grid, &constants, &bind).unwrap();
                let got = read_u32(&y);
                assert_eq!(got[..m * n], want[..], "{dims:?} grid {grid:?}");
                assert_eq!(got[m * n], 0x7FC0_0000, "{dims:?} grid {grid:?}");
            }
        }
    }

    #[test]
    fn refuses_what_its_contract_refuses_and_writes_nothing() {
        let (x, w, y) = (filled(4, 0), filled(16, 0), filled(4, 0x1234_5678));
        let words = Binding::shared_words;
        let bind = [
            words(&x),
            words(&w),
            words(&w),
            words(&w),
            words(&w),
            words(&y),
        ];
        let wide = MLP_MAX_WIDTH + 1;
        for (constants, error) in [
            (
                &[1, 2, 0, 2][..],
                KernelError::Shape("mlp_softmax_f32: M, K, H and N must be non-zero"),
            ),
            (
                &[1, 2, wide, 2][..],
                KernelError::Shape("mlp_softmax_f32: more than 512 hidden units"),
            ),
            (
                &[1, 2, 2, 2][..3],
                KernelError::MissingConstants {
                    needed: 4,
                    given: 3,
                },
            ),
        ] {
            assert_eq!(
                run(&MLP_SOFTMAX_F32, [2, 1, 1], constants, &bind),
                Err(error)
            );
            assert!(read_u32(&y).iter().all(|&v| v == 0x1234_5678));
        }
        let short = filled(3, 0);
        let bind = [
            words(&x),
            words(&w),
            words(&w),
            words(&w),
            words(&w),
            words(&short),
        ];
        assert_eq!(
            run(&MLP_SOFTMAX_F32, [1, 1, 1], &[2, 2, 2, 2], &bind),
            Err(KernelError::BindingTooSmall {
                index: 5,
                len: 12,
                needed: 16
            })
        );
    }
}
