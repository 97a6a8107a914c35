//! FULLY_CONNECTED's spec: the shape, the parameters of both element types and their word
//! encoding, and the binding checks every variant runs behind.

use crate::params::{BindingUse, KernelParams, Words, WEIGHTED_F32_BINDINGS, WEIGHTED_S8_BINDINGS};
use crate::quant::quantize_multiplier;
use crate::shape::{self, need};
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
    const BINDINGS: &'static [BindingUse] = WEIGHTED_S8_BINDINGS;

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
    const BINDINGS: &'static [BindingUse] = WEIGHTED_F32_BINDINGS;

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
}
