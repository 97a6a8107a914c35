//! DEPTHWISE_CONV_2D: TFLM's `reference_integer_ops::DepthwiseConvPerChannel` (int8) and
//! `reference_ops::DepthwiseConv` (float), any depth multiplier.
//!
//! Layouts as TFLite: input `[batches, in_h, in_w, in_depth]`, filter
//! `[1, filter_h, filter_w, out_depth]` with `out_depth = in_depth * depth_multiplier`
//! (output channel `ic * depth_multiplier + m` reads input channel `ic`), output
//! `[batches, out_h, out_w, out_depth]`.
//!
//! Bindings of `depthwise_conv2d_s8` ([`DepthwiseConv2dS8`]):
//! 0. input, `i8`, `batches * in_h * in_w * in_depth`
//! 1. filter, `i8`, `filter_h * filter_w * out_depth`
//! 2. bias, `i32`, `out_depth` (not read, any length, where `has_bias` is false)
//! 3. per-channel multipliers, `i32`, `out_depth`
//!    ([`per_channel_multipliers`](crate::conv2d::per_channel_multipliers))
//! 4. per-channel shifts, `i32`, `out_depth`, each in `-31..=30`
//! 5. output, `i8`, `batches * out_h * out_w * out_depth`
//!
//! Bindings of `depthwise_conv2d_f32` ([`DepthwiseConv2dF32`]): 0 input, 1 filter, 2 bias
//! (`out_depth`, or unread), 3 output, all `f32`.

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

pub use spec::{DepthwiseConv2dF32, DepthwiseConv2dS8, DepthwiseConv2dShape};

use crate::quant::OutputStageS8;
use crate::scratch::Scratch;
use crate::shape;
use core::ops::Range;
use hal_core::kernel::KernelError;

crate::row_tiles::per_channel_row_tiles!(
    DepthwiseConv2dS8,
    channels: |params| params.shape.output_depth()?,
    tuned_dsp: dsp::run_rows,
    tuned_blocked: blocked::run_rows,
    portable: portable::run_rows_s8,
);

crate::row_tiles::f32_row_tiles!(DepthwiseConv2dF32, portable: portable::run_rows_f32);
