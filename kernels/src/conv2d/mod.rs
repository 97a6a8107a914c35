//! CONV_2D: TFLM's `reference_integer_ops::ConvPerChannel` (int8) and
//! `reference_ops::Conv` (float), grouped convolution included.
//!
//! Layouts as TFLite: input `[batches, in_h, in_w, in_depth]` (NHWC), filter
//! `[out_depth, filter_h, filter_w, filter_depth]` (OHWI) with
//! `in_depth = groups * filter_depth`, output `[batches, out_h, out_w, out_depth]`. Where
//! `filter_hwio` is set (no groups), the filter is `[filter_h, filter_w, in_depth,
//! out_depth]` (HWIO) instead, the same length.
//!
//! Bindings of `conv2d_s8` ([`Conv2dS8`]):
//! 0. input, `i8`, `batches * in_h * in_w * in_depth`
//! 1. filter, `i8`, `out_depth * filter_h * filter_w * filter_depth`
//! 2. bias, `i32`, `out_depth` (not read, any length, where `has_bias` is false)
//! 3. per-channel multipliers, `i32`, `out_depth` ([`per_channel_multipliers`])
//! 4. per-channel shifts, `i32`, `out_depth`, each in `-31..=30`
//! 5. output, `i8`, `batches * out_h * out_w * out_depth`
//!
//! Bindings of `conv2d_f32` ([`Conv2dF32`]): 0 input, 1 filter, 2 bias (`out_depth`, or
//! unread), 3 output, all `f32`.

#[cfg(any(ember_blocked, test))]
mod blocked;
#[cfg(any(ember_dsp, test))]
mod dsp;
#[cfg(all(
    any(ember_blocked, test),
    target_arch = "aarch64",
    target_feature = "neon"
))]
mod neon;
mod portable;
mod spec;
#[cfg(test)]
mod tests;
#[cfg(any(test, feature = "tuned-check"))]
pub(crate) mod tuned_check;

pub use spec::{
    per_channel_multipliers, Conv2dF32, Conv2dS8, Conv2dShape, MAX_STACK_PATCH, MAX_TUNED_PATCH,
};

use crate::quant::OutputStageS8;
use crate::scratch::Scratch;
use crate::shape;
use core::ops::Range;
use hal_core::kernel::KernelError;

crate::row_tiles::per_channel_row_tiles!(
    Conv2dS8,
    channels: |params| params.shape.output_depth,
    tuned_dsp: dsp::run_rows,
    tuned_blocked: blocked::run_rows,
    portable: portable::run_rows_s8,
);

crate::row_tiles::f32_row_tiles!(Conv2dF32, portable: portable::run_rows_f32);
