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

#[cfg(any(ember_dsp, test))]
mod dsp;
mod portable;
mod spec;
#[cfg(test)]
mod tests;
#[cfg(any(test, feature = "tuned-check"))]
pub(crate) mod tuned_check;

pub use spec::{per_channel_multipliers, Conv2dF32, Conv2dS8, Conv2dShape};

use crate::quant::OutputStageS8;
use crate::shape;
use core::ops::Range;
use hal_core::kernel::KernelError;

impl Conv2dS8 {
    /// Runs the convolution. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows(
            input,
            filter,
            bias,
            multipliers,
            shifts,
            0..self.shape.rows()?,
            output,
        )
    }

    /// Runs output rows `rows` (of [`rows`](Conv2dShape::rows): one per batch and output row)
    /// into `output`, which holds just those rows; the whole range is [`run`](Self::run).
    /// A tile refuses rows outside the output. On a core with a tuned kernel for the shape
    /// (Armv7E-M's DSP extension: the `dsp` module, OHWI filters) that kernel runs, bit for
    /// bit [`run_rows_portable`](Self::run_rows_portable)'s result.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows_with(input, filter, bias, multipliers, shifts, rows, output, true)
    }

    /// [`run_rows`](Self::run_rows) with the portable loops only: the reference tuned
    /// kernels are checked against.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows_portable(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows_with(
            input,
            filter,
            bias,
            multipliers,
            shifts,
            rows,
            output,
            false,
        )
    }

    /// [`run_rows`](Self::run_rows), with the tuned kernel allowed or not.
    #[allow(clippy::too_many_arguments)]
    fn run_rows_with(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
        tuned: bool,
    ) -> Result<(), KernelError> {
        let out_len = shape::tile_binding_len(
            &rows,
            self.shape.rows()?,
            self.shape.row_len()?,
            output.len(),
            1,
        )?;
        self.check(&[
            input.len(),
            filter.len(),
            bias.len() * 4,
            multipliers.len() * 4,
            shifts.len() * 4,
            out_len,
        ])?;
        shape::shifts_ok(&shifts[..self.shape.output_depth])?;
        let requantize = OutputStageS8 {
            bias,
            has_bias: self.shape.has_bias,
            multipliers,
            shifts,
            per_channel: true,
            output_offset: self.output_offset,
            act_min: self.act_min,
            act_max: self.act_max,
        };
        #[cfg(any(ember_dsp, test))]
        if tuned && dsp::run_rows(self, input, filter, &requantize, rows.clone(), output) {
            return Ok(());
        }
        #[cfg(not(any(ember_dsp, test)))]
        let _ = tuned;
        portable::run_rows_s8(self, input, filter, &requantize, rows, output);
        Ok(())
    }
}

impl Conv2dF32 {
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

    /// Runs output rows `rows` (of [`rows`](Conv2dShape::rows): one per batch and output row)
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
        portable::run_rows_f32(self, input, filter, bias, rows, output);
        Ok(())
    }
}
