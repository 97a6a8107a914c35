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

#[cfg(any(ember_dsp, test))]
mod dsp;
mod portable;
mod spec;
#[cfg(test)]
mod tests;
#[cfg(any(test, feature = "tuned-check"))]
pub(crate) mod tuned_check;

pub use spec::{DepthwiseConv2dF32, DepthwiseConv2dS8, DepthwiseConv2dShape};

use crate::quant::OutputStageS8;
use crate::shape::{self, clamp_f32};
use core::ops::Range;
use hal_core::kernel::KernelError;
use portable::CHANNEL_BLOCK;

crate::row_tiles::per_channel_row_tiles!(
    DepthwiseConv2dS8,
    channels: |params| params.shape.output_depth()?,
    tuned: dsp::run_rows,
    portable: portable::run_rows_s8,
);

impl DepthwiseConv2dF32 {
    /// Runs the convolution. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[f32],
        filter: &[f32],
        bias: &[f32],
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        self.run_rows(input, filter, bias, 0..self.shape.rows()?, output)
    }

    /// Runs output rows `rows` (of [`rows`](DepthwiseConv2dShape::rows): one per batch and output row)
    /// into `output`, which holds just those rows; the whole range is [`run`](Self::run).
    /// A tile refuses rows outside the output.
    pub fn run_rows(
        &self,
        input: &[f32],
        filter: &[f32],
        bias: &[f32],
        rows: Range<usize>,
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        let out_len = shape::tile_binding_len(
            &rows,
            self.shape.rows()?,
            self.shape.row_len()?,
            output.len(),
            4,
        )?;
        self.check(&[input.len() * 4, filter.len() * 4, bias.len() * 4, out_len])?;
        let has_bias = self.shape.has_bias;
        let (lo, hi) = (self.act_min, self.act_max);
        let finish = |o: usize, oc: usize, total: f32| {
            let b = if has_bias { bias[oc] } else { 0.0 };
            output[o] = clamp_f32(total + b, lo, hi);
        };
        if self.shape.depth_multiplier <= CHANNEL_BLOCK {
            // Each output still sums its products in TFLM's order, from 0.
            let mac = |total: &mut f32, x: f32, w: f32| *total += x * w;
            self.shape
                .run_channel_blocks(rows.clone(), input, filter, 0.0f32, |x| x, mac, finish);
        } else {
            self.shape.run_loops(
                rows.clone(),
                0.0f32,
                |total, i, f| *total += input[i] * filter[f],
                finish,
            );
        }
        Ok(())
    }
}
