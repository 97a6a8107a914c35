//! FULLY_CONNECTED's four-row dot product in AArch64 NEON, for the register-blocked kernel
//! on the Cortex-A53 (which has no dot-product instructions): eight inputs a step, widened
//! to 16-bit lanes with the input offset added once for the four rows, each row's eight
//! weights widened and multiplied into four 32-bit lanes (SMLAL, SMLAL2), the lanes added
//! at the end (ADDV); the loads are [`load8`]'s. Every sum is the same wrapping int32 sum as the scalar loop's, taken
//! in another order, so the same value.

use crate::neon_load::load8;
use crate::quant::narrow_offset;
use core::arch::aarch64::{
    int32x4_t, vaddq_s16, vaddvq_s32, vdupq_n_s16, vdupq_n_s32, vget_low_s16, vmlal_high_s16,
    vmlal_s16, vmovl_s8,
};

/// Inputs a step: one 64-bit load of each.
const STEP: usize = 8;

/// `Σ (x + offset) * w` of the input row `x` against each of the four consecutive weight
/// rows of its length in `weights`, wrapping; `None` where `offset` does not fit the 16-bit
/// lanes ([`narrow_offset`]) or `weights` is short.
#[inline(always)]
pub(super) fn dot4(x: &[i8], weights: &[i8], offset: i32) -> Option<[i32; 4]> {
    let narrow = narrow_offset(offset)?;
    let weights = weights.get(..4 * x.len())?;
    // SAFETY: the module is built only where the target enables NEON (`target_feature =
    // "neon"`, every AArch64 target Ember builds for), the one feature `rows` requires.
    Some(unsafe { rows(x, weights, narrow) })
}

/// [`dot4`] over `weights` of exactly four rows of `x.len()`.
#[target_feature(enable = "neon")]
#[inline(never)]
fn rows(x: &[i8], weights: &[i8], narrow: i16) -> [i32; 4] {
    let n = x.len();
    let offsets = vdupq_n_s16(narrow);
    let mut lanes: [int32x4_t; 4] = [vdupq_n_s32(0); 4];
    // Row `k`'s next weight: its first, then advanced one a value of `x`, so that it
    // reads weights `k * n .. (k + 1) * n` in turn, all inside `weights`.
    let mut next: [*const i8; 4] = core::array::from_fn(|k| weights[k * n..].as_ptr());
    let steps = x.chunks_exact(STEP);
    let tail = steps.remainder();
    for step in steps {
        // SAFETY: `step` holds `STEP` bytes, the 64 bits `vld1_s8` reads.
        let values = vaddq_s16(vmovl_s8(unsafe { load8(step.as_ptr()) }), offsets);
        let low = vget_low_s16(values);
        for (sum, at) in lanes.iter_mut().zip(&mut next) {
            // SAFETY: `*at` has advanced once per value of `x` before this step, and this
            // step's `STEP` values are all in `x`, so its `STEP` bytes are weights of its
            // row, inside `weights`.
            let row = vmovl_s8(unsafe { load8(*at) });
            *sum = vmlal_high_s16(vmlal_s16(*sum, low, vget_low_s16(row)), values, row);
            *at = at.wrapping_add(STEP);
        }
    }
    let mut sums: [i32; 4] = core::array::from_fn(|k| vaddvq_s32(lanes[k]));
    for &value in tail {
        let value = i32::from(value) + i32::from(narrow);
        for (sum, at) in sums.iter_mut().zip(&mut next) {
            // SAFETY: as above, for one value of `x`.
            let weight = i32::from(unsafe { **at });
            *sum = sum.wrapping_add(value * weight);
            *at = at.wrapping_add(1);
        }
    }
    sums
}
