//! FULLY_CONNECTED int8 with SMLAD, as CMSIS-NN's `arm_nn_vec_mat_mult_t_s8`: two weight
//! rows (output channels) at a time, four inputs a step, each input word split and offset
//! once for both rows; the output stage fused per pair.

use super::spec::FullyConnectedS8;
use crate::quant::{narrow_offset, pack_bytes, OutputStageS8};
use crate::simd::{smlad, splat16, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word};

/// Runs `p` over bindings [`FullyConnectedS8::check`] has accepted; `false` (nothing
/// written) where the input offset does not fit 16-bit lanes, a per-tensor filter offset
/// is set (TFLM requires it 0) or the stage is one the tuned output stage does not take
/// ([`OutputStageS8::tuned_takes`]), or for no inputs or outputs: the portable loops cover
/// those.
pub(crate) fn run(
    p: &FullyConnectedS8,
    input: &[i8],
    weights: &[i8],
    stage: &OutputStageS8<'_>,
    output: &mut [i8],
) -> bool {
    let (true, Some(offset)) = (p.tuned(), narrow_offset(p.input_offset)) else {
        return false;
    };
    let (n, od) = (p.shape.accum_depth, p.shape.output_depth);
    if n == 0 || od == 0 || !stage.tuned_takes(od) {
        return false;
    }
    let offsets = splat16(offset);
    // Checked once: a per-tensor right shift takes the lean stage, read once.
    let right = stage.right_shifted_per_tensor(od);
    let lean = right.as_ref().map(|r| (r, r.multipliers[0], r.shifts[0]));
    let bias = |c: usize| match stage.has_bias {
        true => stage.bias.get(c).copied().unwrap_or(0),
        false => 0,
    };
    let rows = input.chunks_exact(n).zip(output.chunks_exact_mut(od));
    for (row, out) in rows.take(p.shape.batches) {
        let pairs = weights.chunks_exact(2 * n).zip(out.chunks_exact_mut(2));
        for (pair, (w, o)) in pairs.enumerate() {
            let oc = 2 * pair;
            let (w0, w1) = w.split_at(n);
            let (a0, a1) = dot2(row, w0, w1, offsets, offset);
            if let Some((right, m, s)) = lean {
                let packed = pack_bytes([
                    right.saturated(a0, bias(oc), m, s),
                    right.saturated(a1, bias(oc + 1), m, s),
                    0,
                    0,
                ]);
                let [v0, v1, _, _] = right.clamp(packed).to_le_bytes();
                o.copy_from_slice(&[v0 as i8, v1 as i8]);
            } else {
                // The reference's steps, out of line (a per-channel stage or a left shift).
                stage.apply_each(oc, &[a0, a1], o);
            }
        }
        if od % 2 == 1 {
            let oc = od - 1;
            let w = &weights[oc * n..][..n];
            let acc = dot1(row, w, offsets, offset);
            stage.apply_each(oc, &[acc], &mut out[oc..]);
        }
    }
    true
}

/// `Σ (x + offset) * w` over one row `x` and two weight rows of its length, wrapping.
#[inline(always)]
fn dot2(x: &[i8], w0: &[i8], w1: &[i8], offsets: u32, offset: i16) -> (i32, i32) {
    let (mut a0, mut a1) = (0i32, 0i32);
    let chunks = x.chunks_exact(4);
    let tail = chunks.remainder();
    for ((x, w0), w1) in chunks.zip(w0.chunks_exact(4)).zip(w1.chunks_exact(4)) {
        let x = word(x);
        let (xl, xh) = (sxtab16(offsets, x), sxtab16_ror8(offsets, x));
        let w = word(w0);
        a0 = smlad(xl, sxtb16(w), a0);
        a0 = smlad(xh, sxtb16_ror8(w), a0);
        let w = word(w1);
        a1 = smlad(xl, sxtb16(w), a1);
        a1 = smlad(xh, sxtb16_ror8(w), a1);
    }
    let done = x.len() - tail.len();
    for ((&x, &w0), &w1) in tail.iter().zip(&w0[done..]).zip(&w1[done..]) {
        let x = i32::from(i16::from(x) + offset);
        a0 = a0.wrapping_add(x * i32::from(w0));
        a1 = a1.wrapping_add(x * i32::from(w1));
    }
    (a0, a1)
}

/// `Σ (x + offset) * w` over one row `x` and one weight row of its length, wrapping.
#[inline(always)]
fn dot1(x: &[i8], w: &[i8], offsets: u32, offset: i16) -> i32 {
    let mut a = 0i32;
    let chunks = x.chunks_exact(4);
    let tail = chunks.remainder();
    for (x, w) in chunks.zip(w.chunks_exact(4)) {
        let (x, w) = (word(x), word(w));
        a = smlad(sxtab16(offsets, x), sxtb16(w), a);
        a = smlad(sxtab16_ror8(offsets, x), sxtb16_ror8(w), a);
    }
    let done = x.len() - tail.len();
    for (&x, &w) in tail.iter().zip(&w[done..]) {
        a = a.wrapping_add(i32::from(i16::from(x) + offset) * i32::from(w));
    }
    a
}
