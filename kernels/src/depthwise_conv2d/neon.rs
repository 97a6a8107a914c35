//! DEPTHWISE_CONV_2D's register-blocked block of channels in AArch64 NEON (depth
//! multiplier 1), for the Cortex-A53: sixteen channels of one pixel accumulate in four
//! vectors of 32-bit lanes; each tap loads the sixteen input values (widened to 16-bit
//! lanes, the input offset added) and the sixteen weights (widened) beside each other and
//! multiplies them lane by lane (SMLAL, SMLAL2). Each sum is the same wrapping int32 sum as
//! the scalar block's, taken in the same order, so the same value.

use crate::neon_load::load16;
use crate::taps::Taps;
use core::arch::aarch64::{
    int32x4_t, vaddq_s16, vdupq_n_s16, vdupq_n_s32, vget_low_s16, vget_low_s8, vmlal_high_s16,
    vmlal_s16, vmovl_high_s8, vmovl_s8,
};

/// Channels a block.
pub(super) const CHANNELS: usize = 16;

/// Channels `c..c + CHANNELS` of one pixel at a depth multiplier of 1, accumulated over
/// `taps`, which [`Taps::fit`] has found inside `input` and `filter` for widths of
/// `channels` (the depth), each input value offset by `offset`.
#[inline(always)]
pub(super) fn block(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    (c, channels): (usize, usize),
    offset: i16,
) -> [i32; CHANNELS] {
    if taps.rows == 0 || taps.cols == 0 || c + CHANNELS > channels {
        return [0; CHANNELS];
    }
    // SAFETY: the module is built only where the target enables NEON (`target_feature =
    // "neon"`), the one feature `accumulate` requires; its other conditions are checked
    // above and by the caller's `Taps::fit`.
    unsafe { accumulate(input, filter, taps, c, offset) }
}

/// [`block`]'s sums.
///
/// # Safety
/// As [`block`]'s checks: `Taps::fit` found every tap's `channels` input values and
/// weights inside `input` and `filter`, the taps are not empty, and
/// `c + CHANNELS <= channels`.
#[target_feature(enable = "neon")]
unsafe fn accumulate(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    c: usize,
    offset: i16,
) -> [i32; CHANNELS] {
    let mut sums: [int32x4_t; 4] = [vdupq_n_s32(0); 4];
    let offsets = vdupq_n_s16(offset);
    let mut input_row = input.as_ptr().wrapping_add(taps.first_input + c);
    let mut filter_row = filter.as_ptr().wrapping_add(taps.first_filter + c);
    for _ in 0..taps.rows {
        let (mut x, mut f) = (input_row, filter_row);
        for _ in 0..taps.cols {
            // SAFETY: `x` and `f` point at channel `c` of a tap's input values and
            // weights, `c + CHANNELS` at most the tap's `channels`, all inside the bindings.
            let (values, weights) = unsafe { (load16(x), load16(f)) };
            let low = vaddq_s16(vmovl_s8(vget_low_s8(values)), offsets);
            let high = vaddq_s16(vmovl_high_s8(values), offsets);
            let (weights_low, weights_high) =
                (vmovl_s8(vget_low_s8(weights)), vmovl_high_s8(weights));
            sums[0] = vmlal_s16(sums[0], vget_low_s16(low), vget_low_s16(weights_low));
            sums[1] = vmlal_high_s16(sums[1], low, weights_low);
            sums[2] = vmlal_s16(sums[2], vget_low_s16(high), vget_low_s16(weights_high));
            sums[3] = vmlal_high_s16(sums[3], high, weights_high);
            x = x.wrapping_add(taps.input_col);
            f = f.wrapping_add(taps.filter_col);
        }
        input_row = input_row.wrapping_add(taps.input_row);
        filter_row = filter_row.wrapping_add(taps.filter_row);
    }
    // SAFETY: four vectors of four `i32` lanes are sixteen `i32`s, lane 0 first.
    unsafe { core::mem::transmute::<[int32x4_t; 4], [i32; CHANNELS]>(sums) }
}
