//! FULLY_CONNECTED int8, register-blocked, for cores without a SIMD variant of their own
//! (Cortex-M3, RV32IMAC, Cortex-A53): four weight rows (output channels) accumulate in
//! registers at once, so each input value is loaded, and its offset added, once for four
//! products rather than once for each; single rows take the rest. Each output is the same
//! wrapping int32 sum as the portable loop's, so the result is theirs bit for bit. On
//! AArch64 the four rows' sums are NEON's (`neon.rs`).

use super::spec::FullyConnectedS8;
use crate::quant::OutputStageS8;

/// Weight rows accumulated at once: four sums, four row pointers, the input pointer, its
/// end, the offset and a value and a weight fit a Cortex-M3's 13 general registers.
const ROWS: usize = 4;

/// Runs `p` over bindings [`FullyConnectedS8::check`] has accepted; `false` (nothing
/// written) where a per-tensor filter offset is set (TFLM requires it 0), which the
/// portable loops cover. Out of line: built at this crate's optimization level wherever
/// it is called from.
#[inline(never)]
pub(crate) fn run(
    p: &FullyConnectedS8,
    input: &[i8],
    weights: &[i8],
    stage: &OutputStageS8<'_>,
    output: &mut [i8],
) -> bool {
    if !p.takes_blocked() {
        return false;
    }
    let (n, od) = (p.shape.accum_depth, p.shape.output_depth);
    let offset = p.input_offset;
    let fast = stage.tuned_takes(od);
    let (batches, full) = (p.shape.batches, od - od % ROWS);
    for batch in 0..batches {
        let row = &input[batch * n..][..n];
        let out = &mut output[batch * od..][..od];
        for oc in (0..full).step_by(ROWS) {
            let rows_weights = &weights[oc * n..][..ROWS * n];
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            let sums = super::neon::dot4(row, rows_weights, offset)
                .unwrap_or_else(|| dot::<ROWS>(row, rows_weights, offset));
            #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
            let sums = dot::<ROWS>(row, rows_weights, offset);
            stage.write(fast, oc, &sums, &mut out[oc..oc + ROWS]);
        }
        for oc in full..od {
            let sums = dot::<1>(row, &weights[oc * n..][..n], offset);
            stage.write(fast, oc, &sums, &mut out[oc..=oc]);
        }
    }
    true
}

/// Inputs taken a step: four values, each row's four weights read at fixed offsets from
/// its pointer, one pointer step each.
const STEP: usize = if cfg!(target_arch = "arm") { 1 } else { 4 };

/// `Σ (x + offset) * w` of the input row `x` against each of the `N` consecutive weight
/// rows of its length in `weights` (zeros where `weights` is short), wrapping.
#[inline(always)]
fn dot<const N: usize>(x: &[i8], weights: &[i8], offset: i32) -> [i32; N] {
    let n = x.len();
    let mut acc = [0i32; N];
    let Some(weights) = weights.get(..N * n) else {
        return acc;
    };
    let value = |v: i8| i32::from(v).wrapping_add(offset);
    // Row `k`'s next weight: its first, then advanced one a value of `x`, so that it
    // reads weights `k * n .. (k + 1) * n` in turn, all inside `weights`.
    let mut next: [*const i8; N] = core::array::from_fn(|k| weights[k * n..].as_ptr());
    let steps = x.chunks_exact(STEP);
    let tail = steps.remainder();
    for step in steps {
        let values: [i32; STEP] = core::array::from_fn(|j| value(step[j]));
        for (a, at) in acc.iter_mut().zip(&mut next) {
            for (j, &v) in values.iter().enumerate() {
                // SAFETY: `*at` has advanced once per value of `x` before this step, and
                // this step's `STEP` values are all in `x`, so `at + j` is at most weight
                // `n - 1` of its row, inside `weights`.
                let weight = i32::from(unsafe { *at.add(j) });
                *a = a.wrapping_add(v.wrapping_mul(weight));
            }
            *at = at.wrapping_add(STEP);
        }
    }
    for &v in tail {
        let v = value(v);
        for (a, at) in acc.iter_mut().zip(&mut next) {
            // SAFETY: as above, for one value of `x`.
            let weight = i32::from(unsafe { **at });
            *a = a.wrapping_add(v.wrapping_mul(weight));
            *at = at.wrapping_add(1);
        }
    }
    acc
}
