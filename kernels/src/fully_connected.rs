//! FULLY_CONNECTED: TFLM's `reference_integer_ops::FullyConnected` (int8, per-tensor),
//! `FullyConnectedPerChannel` (int8, per-channel weights) and
//! `reference_ops::FullyConnected` (float).
//!
//! Layouts as TFLite: input `[batches, accum_depth]` (any shape whose flat size is that:
//! TFLM takes the batch count from the output), weights `[output_depth, accum_depth]`,
//! output `[batches, output_depth]`.
//!
//! Bindings of `fully_connected_s8` ([`FullyConnectedS8`]):
//! 0. input, `i8`, `batches * accum_depth`
//! 1. weights, `i8`, `output_depth * accum_depth`
//! 2. bias, `i32`, `output_depth` (not read, any length, where `has_bias` is false)
//! 3. multipliers, `i32`: `output_depth` of them where `per_channel`, else 1
//!    ([`FullyConnectedS8::per_tensor_multiplier`],
//!    [`per_channel_multipliers`](crate::conv2d::per_channel_multipliers))
//! 4. shifts, `i32`, as many as multipliers, each in `-31..=30`
//! 5. output, `i8`, `batches * output_depth`
//!
//! Bindings of `fully_connected_f32` ([`FullyConnectedF32`]): 0 input, 1 weights, 2 bias
//! (`output_depth`, or unread), 3 output, all `f32`.

use crate::params::{KernelParams, Words};
use crate::quant::{dot_s8, quantize_multiplier, OutputStageS8};
use crate::shape::{self, clamp_f32, need};
use hal_core::kernel::KernelError;

/// A fully connected layer's shapes. Encoded as 4 words: `batches, accum_depth,
/// output_depth, has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullyConnectedShape {
    /// Rows of the input (the output's flat size over its last dimension).
    pub batches: usize,
    /// Inputs per row (the weights' last dimension).
    pub accum_depth: usize,
    /// Outputs per row.
    pub output_depth: usize,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl FullyConnectedShape {
    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.accum_depth as u32,
            self.output_depth as u32,
            u32::from(self.has_bias),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let s = Self {
            batches: shape::dim(w)?,
            accum_depth: shape::dim(w)?,
            output_depth: shape::dim(w)?,
            has_bias: shape::flag(w)?,
        };
        shape::product(&[s.batches, s.accum_depth])?;
        shape::product(&[s.output_depth, s.accum_depth])?;
        shape::product(&[s.batches, s.output_depth])?;
        Ok(s)
    }

    fn check_common(&self, lens: &[usize], elem: usize, out: usize) -> Result<(), KernelError> {
        need(lens, 0, self.batches * self.accum_depth, elem)?;
        need(lens, 1, self.output_depth * self.accum_depth, elem)?;
        if self.has_bias {
            need(lens, 2, self.output_depth, 4)?;
        }
        need(lens, out, self.batches * self.output_depth, elem)
    }
}

/// `fully_connected_s8`: int8 fully connected layer. Words: [`FullyConnectedShape`]'s 4,
/// then `input_offset` (`-input_zero_point`), `filter_offset` (`-filter_zero_point`,
/// added to each weight on the per-tensor path only, as TFLM; TFLM requires it 0),
/// `output_offset` (`output_zero_point`), `act_min`, `act_max`, `per_channel` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullyConnectedS8 {
    /// Shapes.
    pub shape: FullyConnectedShape,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `-filter_zero_point` (per-tensor path only).
    pub filter_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
    /// One multiplier and shift per output channel (TFLM's `FullyConnectedPerChannel`,
    /// chosen where the weights carry more than one scale) rather than one.
    pub per_channel: bool,
}

impl KernelParams for FullyConnectedS8 {
    const KERNEL: &'static str = "fully_connected_s8";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.filter_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
            u32::from(self.per_channel),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = FullyConnectedShape::decode(w)?;
        let input_offset = w.i32()?;
        let filter_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        let per_channel = shape::flag(w)?;
        Ok(Self {
            shape,
            input_offset,
            filter_offset,
            output_offset,
            act_min,
            act_max,
            per_channel,
        })
    }
}

impl FullyConnectedS8 {
    /// The per-tensor multiplier and shift, as TFLM's `GetQuantizedConvolutionMultipler`:
    /// `quantize_multiplier(f64(input_scale * filter_scale) / f64(output_scale))`, the
    /// product of the two scales taken in `f32` (unlike the per-channel path's `f64`).
    pub fn per_tensor_multiplier(
        input_scale: f32,
        filter_scale: f32,
        output_scale: f32,
    ) -> (i32, i32) {
        quantize_multiplier(f64::from(input_scale * filter_scale) / f64::from(output_scale))
    }

    /// Multipliers (and shifts) the bindings hold: `output_depth` or 1.
    pub fn channels(&self) -> usize {
        if self.per_channel {
            self.shape.output_depth
        } else {
            1
        }
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 1, 5)?;
        need(binding_lens, 3, self.channels(), 4)?;
        need(binding_lens, 4, self.channels(), 4)
    }

    /// Runs the layer. `bias` is ignored where `has_bias` is false. On a core with a tuned
    /// kernel for it (Armv7E-M's DSP extension: the `dsp` module) that kernel runs, bit for
    /// bit [`run_portable`](Self::run_portable)'s result.
    pub fn run(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_with(input, weights, bias, multipliers, shifts, output, true)
    }

    /// Runs the layer with the portable loops only: the reference tuned kernels are
    /// checked against.
    pub fn run_portable(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_with(input, weights, bias, multipliers, shifts, output, false)
    }

    /// [`run`](Self::run), with the tuned kernel allowed or not.
    #[allow(clippy::too_many_arguments)]
    fn run_with(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
        tuned: bool,
    ) -> Result<(), KernelError> {
        self.check(&[
            input.len(),
            weights.len(),
            bias.len() * 4,
            multipliers.len() * 4,
            shifts.len() * 4,
            output.len(),
        ])?;
        shape::shifts_ok(&shifts[..self.channels()])?;
        let FullyConnectedShape {
            batches,
            accum_depth: n,
            output_depth: od,
            has_bias,
        } = self.shape;
        let stage = OutputStageS8 {
            bias,
            has_bias,
            multipliers,
            shifts,
            per_channel: self.per_channel,
            output_offset: self.output_offset,
            act_min: self.act_min,
            act_max: self.act_max,
        };
        #[cfg(ember_dsp)]
        if tuned && crate::dsp::fully_connected::run(self, input, weights, &stage, output) {
            return Ok(());
        }
        #[cfg(not(ember_dsp))]
        let _ = tuned;
        let in_off = self.input_offset;
        let f_off = if self.per_channel {
            0
        } else {
            self.filter_offset
        };
        for b in 0..batches {
            let row = &input[b * n..(b + 1) * n];
            for oc in 0..od {
                let w = &weights[oc * n..(oc + 1) * n];
                let mut acc: i32 = 0;
                if in_off == 0 && f_off == 0 {
                    // The importer folds the input offset into the bias where it can.
                    acc = dot_s8(row, w);
                } else {
                    for (&x, &f) in row.iter().zip(w) {
                        let x = i32::from(x).wrapping_add(in_off);
                        let f = i32::from(f).wrapping_add(f_off);
                        acc = acc.wrapping_add(f.wrapping_mul(x));
                    }
                }
                output[b * od + oc] = stage.apply(oc, acc);
            }
        }
        Ok(())
    }
}

/// `fully_connected_f32`: float fully connected layer, as TFLM's
/// `reference_ops::FullyConnected`. Words: [`FullyConnectedShape`]'s 4, then `act_min`
/// and `act_max` as `f32` bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FullyConnectedF32 {
    /// Shapes.
    pub shape: FullyConnectedShape,
    /// Lower clamp.
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for FullyConnectedF32 {
    const KERNEL: &'static str = "fully_connected_f32";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([self.act_min.to_bits(), self.act_max.to_bits()]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = FullyConnectedShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        Ok(Self {
            shape,
            act_min,
            act_max,
        })
    }
}

impl FullyConnectedF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 4, 3)
    }

    /// Runs the layer. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[f32],
        weights: &[f32],
        bias: &[f32],
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        self.check(&[
            input.len() * 4,
            weights.len() * 4,
            bias.len() * 4,
            output.len() * 4,
        ])?;
        let FullyConnectedShape {
            batches,
            accum_depth: n,
            output_depth: od,
            has_bias,
        } = self.shape;
        for b in 0..batches {
            let row = &input[b * n..(b + 1) * n];
            for oc in 0..od {
                let w = &weights[oc * n..(oc + 1) * n];
                let mut total = 0.0f32;
                for (&x, &f) in row.iter().zip(w) {
                    total += x * f;
                }
                let bv = if has_bias { bias[oc] } else { 0.0 };
                output[b * od + oc] = clamp_f32(total + bv, self.act_min, self.act_max);
            }
        }
        Ok(())
    }
}
