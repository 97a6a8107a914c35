//! CONV_2D's register-blocked block of output channels in AArch64 NEON, for the Cortex-A53
//! (which has no dot-product instructions): sixteen output channels of one pixel accumulate
//! in four vectors of 32-bit lanes. Eight input values of a run are loaded at once and
//! widened to 16-bit lanes with the input offset added; each then multiplies its weight
//! row's sixteen values (one load, widened) by lane (SMLAL and SMLAL2 by element); a run's
//! last values go one at a time. Each sum is the same wrapping int32 sum as the scalar
//! block's, taken in the same order, so the same value.

use crate::neon_load::{load16, load8};
use crate::taps::Taps;
use core::arch::aarch64::{
    int16x8_t, int32x4_t, int8x16_t, vaddq_s16, vdupq_n_s16, vdupq_n_s32, vget_low_s16,
    vget_low_s8, vmlal_high_laneq_s16, vmlal_high_n_s16, vmlal_laneq_s16, vmlal_n_s16,
    vmovl_high_s8, vmovl_s8,
};

/// Output channels a block.
pub(super) const CHANNELS: usize = 16;

/// Input values a step.
const STEP: usize = 8;

/// Output channels `oc..oc + CHANNELS` (all below `od`) of one pixel accumulated over
/// `taps`, which [`Taps::fit`] has found inside `input` (`id` values a tap) and `filter`
/// (`id * od` weights a tap), each input value offset by `offset`.
#[inline(always)]
pub(super) fn block(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    (id, od): (usize, usize),
    oc: usize,
    offset: i16,
) -> [i32; CHANNELS] {
    if taps.rows == 0 || taps.cols == 0 || oc + CHANNELS > od {
        return [0; CHANNELS];
    }
    // SAFETY: the module is built only where the target enables NEON (`target_feature =
    // "neon"`), the one feature `accumulate` requires; its other conditions are checked
    // above and by the caller's `Taps::fit`.
    unsafe { accumulate(input, filter, taps, (id, od), oc, offset) }
}

/// [`block`]'s sums, for taps inside the bindings and `oc + CHANNELS <= od`.
///
/// # Safety
/// As [`block`]'s checks: `Taps::fit` found every tap inside `input` and `filter`, the taps
/// are not empty, and `oc + CHANNELS <= od`.
#[target_feature(enable = "neon")]
unsafe fn accumulate(
    input: &[i8],
    filter: &[i8],
    taps: &Taps,
    (id, od): (usize, usize),
    oc: usize,
    offset: i16,
) -> [i32; CHANNELS] {
    let mut sums: [int32x4_t; 4] = [vdupq_n_s32(0); 4];
    let offsets = vdupq_n_s16(offset);
    // As the scalar block: one run of `cols * id` values a filter row where the taps'
    // inputs are contiguous, else one run of `id` a tap.
    let (runs, run_len) = if taps.input_col == id {
        (1, taps.cols * id)
    } else {
        (taps.cols, id)
    };
    let mut input_row = input.as_ptr().wrapping_add(taps.first_input);
    let mut filter_row = filter.as_ptr().wrapping_add(taps.first_filter + oc);
    for _ in 0..taps.rows {
        let (mut x, mut f) = (input_row, filter_row);
        for _ in 0..runs {
            let (mut value_at, mut weights_at) = (x, f);
            let mut left = run_len;
            while left >= STEP {
                // SAFETY: the run's next `STEP` values are in `input` (`left` of the run
                // remain, and `Taps::fit` found each tap's `id` values inside it).
                let values = vaddq_s16(vmovl_s8(unsafe { load8(value_at) }), offsets);
                macro_rules! lane {
                    ($lane:literal) => {
                        // SAFETY: `weights_at` is the weight row of one of the run's input
                        // channels at output channel `oc`; `oc + CHANNELS <= od` and
                        // `Taps::fit` found the tap's `id * od` weights inside `filter`.
                        let weights = unsafe { load16(weights_at) };
                        multiply_lane::<$lane>(&mut sums, weights, values);
                        weights_at = weights_at.wrapping_add(od);
                    };
                }
                lane!(0);
                lane!(1);
                lane!(2);
                lane!(3);
                lane!(4);
                lane!(5);
                lane!(6);
                lane!(7);
                value_at = value_at.wrapping_add(STEP);
                left -= STEP;
            }
            for _ in 0..left {
                // SAFETY: as above, one value and its weight row.
                let value = i16::from(unsafe { *value_at }) + offset;
                // SAFETY: as above.
                let (low, high) = widen(unsafe { load16(weights_at) });
                sums[0] = vmlal_n_s16(sums[0], vget_low_s16(low), value);
                sums[1] = vmlal_high_n_s16(sums[1], low, value);
                sums[2] = vmlal_n_s16(sums[2], vget_low_s16(high), value);
                sums[3] = vmlal_high_n_s16(sums[3], high, value);
                value_at = value_at.wrapping_add(1);
                weights_at = weights_at.wrapping_add(od);
            }
            x = x.wrapping_add(taps.input_col);
            f = f.wrapping_add(taps.filter_col);
        }
        input_row = input_row.wrapping_add(taps.input_row);
        filter_row = filter_row.wrapping_add(taps.filter_row);
    }
    // SAFETY: four vectors of four `i32` lanes are sixteen `i32`s, lane 0 first.
    unsafe { core::mem::transmute::<[int32x4_t; 4], [i32; CHANNELS]>(sums) }
}

/// `weights`' low and high eight values widened to 16-bit lanes.
#[inline(always)]
fn widen(weights: int8x16_t) -> (int16x8_t, int16x8_t) {
    // SAFETY: NEON is enabled wherever this module is built (`target_feature = "neon"`).
    unsafe { (vmovl_s8(vget_low_s8(weights)), vmovl_high_s8(weights)) }
}

/// Adds lane `LANE` of `values` times each of `weights`' sixteen values to `sums`.
#[inline(always)]
fn multiply_lane<const LANE: i32>(
    sums: &mut [int32x4_t; 4],
    weights: int8x16_t,
    values: int16x8_t,
) {
    let (low, high) = widen(weights);
    // SAFETY: NEON is enabled wherever this module is built (`target_feature = "neon"`).
    unsafe {
        sums[0] = vmlal_laneq_s16::<LANE>(sums[0], vget_low_s16(low), values);
        sums[1] = vmlal_high_laneq_s16::<LANE>(sums[1], low, values);
        sums[2] = vmlal_laneq_s16::<LANE>(sums[2], vget_low_s16(high), values);
        sums[3] = vmlal_high_laneq_s16::<LANE>(sums[3], high, values);
    }
}
