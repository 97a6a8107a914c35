//! `matmul_f32`: blocked matrix multiply `C = A·B`, with an optional bias and ReLU.

use ember_kernels::builtin;

use crate::kernel::{Entry, F32s, Kernel, KernelError, Workgroup};

use super::util::{relu, share};

/// The `matmul_f32` table entry.
pub const MATMUL_F32: Kernel = Kernel {
    name: "matmul_f32",
    entry: Entry::Shared(matmul_f32),
};

/// Flag bit 0 (constant 3): add `bias[j]` (binding 3, `N` elements) to column `j` of every row.
pub const FLAG_BIAS: u32 = builtin::MATMUL_FLAG_BIAS;
/// Flag bit 1 (constant 3): apply ReLU to every element after the bias.
pub const FLAG_RELU: u32 = builtin::MATMUL_FLAG_RELU;

/// Rows of `C` in one tile.
const TILE_M: usize = 4;
/// Columns of `C` in one tile.
const TILE_N: usize = 16;
/// Depth of one block of the `K` loop.
const BLOCK_K: usize = 64;

/// `C = A·B` (then `+ bias`, then ReLU, as flags ask) for row-major `f32` matrices.
///
/// Constants: 0 `M`, 1 `K`, 2 `N`, and optionally 3 `flags` (0 when absent): [`FLAG_BIAS`]
/// and [`FLAG_RELU`]; other bits are refused. Bindings: 0 `A` (`M × K`), 1 `B` (`K × N`),
/// 2 `C` (`M × N`, written), and 3 `bias` (`N` elements) only with [`FLAG_BIAS`]. Longer
/// bindings are fine; only the leading elements are read or written.
///
/// `C` is split into tiles of 4 rows × 16 columns, numbered row-major, and each workgroup
/// computes its [`Workgroup::share_of`] of the tiles, so any grid works and workgroups write
/// disjoint elements. For each tile the `K` loop runs in blocks of 64: the tile's rows of the
/// `A` block and the `B` panel are copied into stack arrays (about 5 KiB), multiplied into
/// a tile accumulator in locals, and the finished tile is stored once. Each element of `C` is
/// the sum over `k` in increasing order, in `f32`, of `A[i][k] * B[k][j]`.
///
/// `C` must not share memory with `A`, `B` or `bias` (the result would be unspecified, though
/// memory-safe).
///
/// # Errors
///
/// What [`builtin::MATMUL_F32`] refuses: [`KernelError::MissingConstants`] with fewer than
/// three constants, [`KernelError::Shape`]
/// if `M`, `K` or `N` is 0, a matrix's size in bytes overflows, or `flags` has unknown bits;
/// [`KernelError::MissingBinding`], [`KernelError::Misaligned`] (bindings must start 4-byte
/// aligned), [`KernelError::ReadOnly`] if `C` is read-only, and
/// [`KernelError::BindingTooSmall`] naming the bytes needed (`4·M·K`, `4·K·N`, `4·M·N`,
/// `4·N`).
pub fn matmul_f32(wg: &Workgroup<'_>) -> Result<(), KernelError> {
    let [m, k, n, flags] = builtin::MATMUL_F32
        .check(wg.constants, wg.bindings)?
        .constants;
    // The contract checked that every matrix's size in bytes fits `usize`, and each
    // dimension is at most such a product (the others are >= 1).
    let shape = Shape {
        m: m as usize,
        k: k as usize,
        n: n as usize,
        flags,
    };
    let a = wg.input_f32(0)?;
    let b = wg.input_f32(1)?;
    let c = wg.output_f32(2)?;
    let bias = if shape.flags & FLAG_BIAS != 0 {
        Some(wg.input_f32(3)?)
    } else {
        None
    };

    let tiles_n = shape.n.div_ceil(TILE_N);
    let tiles = shape.m.div_ceil(TILE_M) * tiles_n;
    // Stack blocks, reused across tiles. Lanes past the tile's edge (rows of `a_block` past
    // its last row, columns of `b_panel` past its last column) may hold stale values: they
    // only feed accumulator lanes that are never stored.
    let mut a_block = [[0.0f32; BLOCK_K]; TILE_M];
    let mut b_panel = [[0.0f32; TILE_N]; BLOCK_K];
    for tile in share(wg, tiles) {
        let row0 = (tile / tiles_n) * TILE_M;
        let col0 = (tile % tiles_n) * TILE_N;
        let rows = (shape.m - row0).min(TILE_M);
        let cols = (shape.n - col0).min(TILE_N);
        let mut acc = [[0.0f32; TILE_N]; TILE_M];
        let mut k0 = 0;
        while k0 < shape.k {
            let depth = (shape.k - k0).min(BLOCK_K);
            for (i, a_row) in a_block.iter_mut().enumerate().take(rows) {
                a.read_into((row0 + i) * shape.k + k0, &mut a_row[..depth]);
            }
            for (kk, b_row) in b_panel.iter_mut().enumerate().take(depth) {
                b.read_into((k0 + kk) * shape.n + col0, &mut b_row[..cols]);
            }
            accumulate(&mut acc, &a_block, &b_panel, depth);
            k0 += depth;
        }
        store(&c, bias.as_ref(), shape, &acc, row0, col0, rows, cols);
    }
    Ok(())
}

/// The checked constants, as `usize`s.
#[derive(Clone, Copy)]
struct Shape {
    m: usize,
    k: usize,
    n: usize,
    flags: u32,
}

/// `acc += a_block[.., ..depth] · b_panel[..depth, ..]` over the full 4 × 16 tile (fixed
/// sizes, so the inner loop vectorises).
#[inline]
fn accumulate(
    acc: &mut [[f32; TILE_N]; TILE_M],
    a_block: &[[f32; BLOCK_K]; TILE_M],
    b_panel: &[[f32; TILE_N]; BLOCK_K],
    depth: usize,
) {
    for (kk, b_row) in b_panel.iter().enumerate().take(depth) {
        for (acc_row, a_row) in acc.iter_mut().zip(a_block) {
            let a_ik = a_row[kk];
            for (c, &b_kj) in acc_row.iter_mut().zip(b_row) {
                *c += a_ik * b_kj;
            }
        }
    }
}

/// Applies the bias and ReLU flags to the tile's `rows × cols` corner and stores it at
/// `(row0, col0)` of `C`.
#[allow(clippy::too_many_arguments)]
fn store(
    c: &F32s<'_>,
    bias: Option<&F32s<'_>>,
    shape: Shape,
    acc: &[[f32; TILE_N]; TILE_M],
    row0: usize,
    col0: usize,
    rows: usize,
    cols: usize,
) {
    let mut bias_row = [0.0f32; TILE_N];
    if let Some(bias) = bias {
        bias.read_into(col0, &mut bias_row[..cols]);
    }
    for (i, acc_row) in acc.iter().enumerate().take(rows) {
        let mut out = *acc_row;
        for (v, &b) in out.iter_mut().zip(&bias_row) {
            if bias.is_some() {
                *v += b;
            }
            if shape.flags & FLAG_RELU != 0 {
                *v = relu(*v);
            }
        }
        c.write_from((row0 + i) * shape.n + col0, &out[..cols]);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::kernel::Binding;
    use crate::kernels::testutil::{f32_words, filled, read_f32, run, Aligned, Rng, GRIDS};

    /// `(value, scale)` per element of the f64 reference: `scale` is `Σ|a·b| + |bias|`, the
    /// size of the terms, which bounds the f32 rounding error of a dot product.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        a: &[f32],
        b: &[f32],
        bias: Option<&[f32]>,
        relu_on: bool,
        m: usize,
        k: usize,
        n: usize,
    ) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(m * n);
        for i in 0..m {
            for j in 0..n {
                let (mut sum, mut scale) = (0.0f64, 0.0f64);
                for kk in 0..k {
                    let t = f64::from(a[i * k + kk]) * f64::from(b[kk * n + j]);
                    sum += t;
                    scale += t.abs();
                }
                if let Some(bias) = bias {
                    sum += f64::from(bias[j]);
                    scale += f64::from(bias[j]).abs();
                }
                if relu_on && sum < 0.0 {
                    sum = 0.0;
                }
                out.push((sum, scale));
            }
        }
        out
    }

    fn check(m: usize, k: usize, n: usize, flags: u32, grid: [u32; 3], seed: u64) {
        let mut rng = Rng::new(seed);
        let a = rng.vec(m * k, -1.0, 1.0);
        let b = rng.vec(k * n, -1.0, 1.0);
        let bias = rng.vec(n, -2.0, 2.0);
        let (wa, wb, wbias) = (f32_words(&a), f32_words(&b), f32_words(&bias));
        // One spare element past C's end must stay untouched.
        let c = filled(m * n + 1, 0x7FC0_0000);
        let bindings = [
            Binding::shared_words(&wa),
            Binding::shared_words(&wb),
            Binding::shared_words(&c),
            Binding::shared_words(&wbias),
        ];
        let constants = [m as u32, k as u32, n as u32, flags];
        // Without flags, drop constant 3 and the bias binding altogether.
        let (constants, bindings) = if flags == 0 {
            (&constants[..3], &bindings[..3])
        } else {
            (&constants[..], &bindings[..])
        };
        run(&MATMUL_F32, grid, constants, bindings).unwrap();
        let got = read_f32(&c);
        let want = reference(
            &a,
            &b,
            (flags & FLAG_BIAS != 0).then_some(&bias[..]),
            flags & FLAG_RELU != 0,
            m,
            k,
            n,
        );
        for (idx, (&g, &(w, scale))) in got.iter().zip(&want).enumerate() {
            let err = (f64::from(g) - w).abs();
            assert!(
                err <= 1e-4 * scale.max(f64::MIN_POSITIVE) && g.is_finite(),
                "{m}x{k}x{n} flags {flags} grid {grid:?} C[{}][{}] = {g}, want {w}",
                idx / n,
                idx % n
            );
            if flags & FLAG_RELU != 0 {
                assert!(g >= 0.0);
            }
        }
        assert!(got[m * n].is_nan(), "wrote past C");
    }

    #[test]
    fn small_shapes_on_every_grid() {
        // Miri is slow; its point here is the binding views, which three grids cover.
        let grids = if cfg!(miri) { &GRIDS[..3] } else { GRIDS };
        for &grid in grids {
            for (m, k, n) in [(1, 1, 1), (5, 7, 3), (4, 16, 16), (3, 65, 17), (9, 2, 33)] {
                check(m, k, n, 0, grid, (m * 100 + k * 10 + n) as u64);
            }
        }
    }

    #[test]
    fn bias_and_relu() {
        for &grid in &GRIDS[..3] {
            for flags in [FLAG_BIAS, FLAG_RELU, FLAG_BIAS | FLAG_RELU] {
                check(5, 7, 3, flags, grid, 40 + u64::from(flags));
                check(6, 9, 20, flags, grid, 50 + u64::from(flags));
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn larger_shapes() {
        for &grid in GRIDS {
            check(17, 70, 33, 0, grid, 1);
            check(17, 70, 33, FLAG_BIAS | FLAG_RELU, grid, 2);
        }
        check(64, 64, 64, 0, [1, 1, 1], 3);
        check(64, 64, 64, FLAG_BIAS, [4, 4, 1], 4);
        check(64, 130, 64, 0, [64, 2, 1], 5);
    }

    #[test]
    fn exact_small_integers() {
        // [[1,2],[3,4]] · [[5,6],[7,8]] = [[19,22],[43,50]]; + bias [-20, -100], ReLU.
        let a = f32_words(&[1.0, 2.0, 3.0, 4.0]);
        let b = f32_words(&[5.0, 6.0, 7.0, 8.0]);
        let bias = f32_words(&[-20.0, -100.0]);
        let c = filled(4, 0);
        let bind = [
            Binding::shared_words(&a),
            Binding::shared_words(&b),
            Binding::shared_words(&c),
            Binding::shared_words(&bias),
        ];
        run(&MATMUL_F32, [1, 1, 1], &[2, 2, 2], &bind).unwrap();
        assert_eq!(read_f32(&c), [19.0, 22.0, 43.0, 50.0]);
        run(&MATMUL_F32, [2, 1, 1], &[2, 2, 2, FLAG_BIAS], &bind).unwrap();
        assert_eq!(read_f32(&c), [-1.0, -78.0, 23.0, -50.0]);
        run(
            &MATMUL_F32,
            [3, 1, 1],
            &[2, 2, 2, FLAG_BIAS | FLAG_RELU],
            &bind,
        )
        .unwrap();
        assert_eq!(read_f32(&c), [0.0, 0.0, 23.0, 0.0]);
    }

    #[test]
    fn read_only_inputs() {
        let mut rng = Rng::new(77);
        let (m, k, n) = (3, 5, 18);
        let (a, b, bias) = (
            rng.vec(m * k, -1.0, 1.0),
            rng.vec(k * n, -1.0, 1.0),
            rng.vec(n, -1.0, 1.0),
        );
        let (ra, rb, rbias) = (
            Aligned::of_f32(&a),
            Aligned::of_f32(&b),
            Aligned::of_f32(&bias),
        );
        let c = filled(m * n, 0);
        let bind = [
            Binding::read_only(ra.bytes()),
            Binding::read_only(rb.bytes()),
            Binding::shared_words(&c),
            Binding::read_only(rbias.bytes()),
        ];
        run(
            &MATMUL_F32,
            [2, 1, 1],
            &[m as u32, k as u32, n as u32, FLAG_BIAS],
            &bind,
        )
        .unwrap();
        let want = reference(&a, &b, Some(&bias), false, m, k, n);
        for (&g, &(w, scale)) in read_f32(&c).iter().zip(&want) {
            assert!((f64::from(g) - w).abs() <= 1e-4 * scale);
        }
    }

    #[test]
    fn errors() {
        let a = filled(5 * 7, 0);
        let b = filled(7 * 3, 0);
        let c = filled(5 * 3, 0);
        let bias = filled(3, 0);
        let short = filled(2, 0);
        let ok = [
            Binding::shared_words(&a),
            Binding::shared_words(&b),
            Binding::shared_words(&c),
            Binding::shared_words(&bias),
        ];
        let shape = [5, 7, 3];
        assert_eq!(run(&MATMUL_F32, [2, 2, 1], &shape, &ok), Ok(()));
        assert_eq!(
            run(&MATMUL_F32, [1, 1, 1], &shape[..2], &ok),
            Err(KernelError::MissingConstants {
                needed: 3,
                given: 2
            })
        );
        for bad in [
            [0, 7, 3],
            [5, 0, 3],
            [5, 7, 0],
            [u32::MAX, u32::MAX, 1],
            [1, u32::MAX, u32::MAX],
        ] {
            assert!(
                matches!(
                    run(&MATMUL_F32, [2, 1, 1], &bad, &ok),
                    Err(KernelError::Shape(_))
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            run(&MATMUL_F32, [1, 1, 1], &[5, 7, 3, 4], &ok),
            Err(KernelError::Shape(_))
        ));
        // Exact bytes needed, per binding.
        for (index, needed) in [
            (0u32, 4 * 5 * 7),
            (1, 4 * 7 * 3),
            (2, 4 * 5 * 3),
            (3, 4 * 3),
        ] {
            let mut bind = ok;
            bind[index as usize] = Binding::shared_words(&short);
            assert_eq!(
                run(&MATMUL_F32, [3, 1, 1], &[5, 7, 3, FLAG_BIAS], &bind),
                Err(KernelError::BindingTooSmall {
                    index,
                    len: 8,
                    needed
                })
            );
        }
        // A size past 32-bit address spaces: exact bytes on 64-bit hosts.
        let big = run(&MATMUL_F32, [1, 1, 1], &[1 << 16, 1 << 16, 1], &ok);
        if usize::BITS < 64 {
            assert!(matches!(big, Err(KernelError::Shape(_))));
        } else {
            assert_eq!(
                big,
                Err(KernelError::BindingTooSmall {
                    index: 0,
                    len: 4 * 5 * 7,
                    needed: 1 << 34
                })
            );
        }
        assert_eq!(
            run(&MATMUL_F32, [1, 1, 1], &[5, 7, 3, FLAG_BIAS], &ok[..3]),
            Err(KernelError::MissingBinding { index: 3, bound: 3 })
        );
        assert_eq!(
            run(&MATMUL_F32, [1, 1, 1], &shape, &ok[..2]),
            Err(KernelError::MissingBinding { index: 2, bound: 2 })
        );
        let ro = Aligned::of_f32(&[0.0; 15]);
        let mut bind = ok;
        bind[2] = Binding::read_only(ro.bytes());
        assert_eq!(
            run(&MATMUL_F32, [1, 1, 1], &shape, &bind),
            Err(KernelError::ReadOnly { index: 2 })
        );
        let ra = Aligned::of_f32(&[0.0; 35]);
        let mut bind = ok;
        bind[0] = Binding::read_only(ra.misaligned());
        assert_eq!(
            run(&MATMUL_F32, [1, 1, 1], &shape, &bind),
            Err(KernelError::Misaligned {
                index: 0,
                alignment: 4
            })
        );
    }
}
