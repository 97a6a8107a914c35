//! FULLY_CONNECTED int8 with SMLAD, as CMSIS-NN's `arm_nn_vec_mat_mult_t_s8`: two weight
//! rows (output channels) at a time, four inputs a step, each input word split and offset
//! once for both rows; the output stage fused per pair.

use super::spec::FullyConnectedS8;
use crate::quant::{narrow_offset, OutputStageS8};
use crate::simd::{smlad, splat16, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word};

/// Runs `p` over bindings [`FullyConnectedS8::check`] has accepted; `false` (nothing
/// written) where the input offset does not fit 16-bit lanes, a per-tensor filter offset
/// is set (TFLM requires it 0) or the stage is one the tuned output stage does not take
/// ([`OutputStageS8::tuned_takes`]): the portable loops cover those.
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
    if !stage.tuned_takes(od) {
        return false;
    }
    let offsets = splat16(offset);
    for b in 0..p.shape.batches {
        let row = &input[b * n..][..n];
        let out = &mut output[b * od..][..od];
        let mut oc = 0;
        while oc + 2 <= od {
            let w0 = &weights[oc * n..][..n];
            let w1 = &weights[(oc + 1) * n..][..n];
            let (a0, a1) = dot2(row, w0, w1, offsets, offset);
            let [s0, s1] = stage.stages::<2>(oc);
            out[oc] = s0.apply(a0);
            out[oc + 1] = s1.apply(a1);
            oc += 2;
        }
        if oc < od {
            let w = &weights[oc * n..][..n];
            out[oc] = stage.channel(oc).apply(dot1(row, w, offsets, offset));
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
