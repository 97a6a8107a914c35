//! DEPTHWISE_CONV_2D's spec: the shapes and window, the parameters of both element types
//! and their word encoding, and the binding checks every variant runs behind.

use crate::padding::Window;
use crate::params::{BindingUse, KernelParams, Words, WEIGHTED_F32_BINDINGS, WEIGHTED_S8_BINDINGS};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// A depthwise convolution's shapes and window. Encoded as 15 words: `batches,
/// input_height, input_width, input_depth, depth_multiplier, filter_height, filter_width,
/// output_height, output_width`, the [`Window`]'s six words, then `has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthwiseConv2dShape {
    /// Batches.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels.
    pub input_depth: usize,
    /// Output channels per input channel.
    pub depth_multiplier: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Strides, dilations, padding.
    pub window: Window,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl DepthwiseConv2dShape {
    /// Output rows: one per batch and output row, each `output_width` pixels.
    pub fn rows(&self) -> Result<usize, KernelError> {
        shape::product(&[self.batches, self.output_height])
    }

    /// Elements of one output row.
    pub fn row_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.output_width, self.output_depth()?])
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.input_depth as u32,
            self.depth_multiplier as u32,
            self.filter_height as u32,
            self.filter_width as u32,
            self.output_height as u32,
            self.output_width as u32,
        ]);
        self.window.encode(out);
        out.extend([u32::from(self.has_bias)]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let s = Self {
            batches: shape::dim(w)?,
            input_height: shape::dim(w)?,
            input_width: shape::dim(w)?,
            input_depth: shape::dim(w)?,
            depth_multiplier: shape::dim(w)?,
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            window: Window::decode(w)?,
            has_bias: shape::flag(w)?,
        };
        s.output_depth()?;
        s.input_len()?;
        s.filter_len()?;
        s.output_len()?;
        s.window.fits(
            s.output_height,
            s.output_width,
            s.filter_height,
            s.filter_width,
        )?;
        Ok(s)
    }

    /// `input_depth * depth_multiplier`.
    pub fn output_depth(&self) -> Result<usize, KernelError> {
        shape::product(&[self.input_depth, self.depth_multiplier])
    }

    /// Input elements.
    pub fn input_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.input_height,
            self.input_width,
            self.input_depth,
        ])
    }

    /// Filter elements.
    pub fn filter_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.filter_height, self.filter_width, self.output_depth()?])
    }

    /// Output elements.
    pub fn output_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.output_height,
            self.output_width,
            self.output_depth()?,
        ])
    }

    fn check_common(&self, lens: &[usize], elem: usize, out: usize) -> Result<(), KernelError> {
        need(lens, 0, self.input_len()?, elem)?;
        need(lens, 1, self.filter_len()?, elem)?;
        if self.has_bias {
            need(lens, 2, self.output_depth()?, 4)?;
        }
        need(lens, out, self.output_len()?, elem)
    }
}

/// `depthwise_conv2d_s8`: int8 depthwise convolution with per-channel requantization, as
/// TFLM's `DepthwiseConvPerChannel`. Words: [`DepthwiseConv2dShape`]'s 15, then
/// `input_offset` (`-input_zero_point`), `output_offset` (`output_zero_point`),
/// `act_min`, `act_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthwiseConv2dS8 {
    /// Shapes and window.
    pub shape: DepthwiseConv2dShape,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for DepthwiseConv2dS8 {
    const KERNEL: &'static str = "depthwise_conv2d_s8";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_S8_BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = DepthwiseConv2dShape::decode(w)?;
        let input_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        Ok(Self {
            shape,
            input_offset,
            output_offset,
            act_min,
            act_max,
        })
    }
}

impl DepthwiseConv2dS8 {
    /// Whether the Cortex-M4 kernel (`dsp.rs`) takes these parameters: a depth multiplier
    /// of 1 and an input offset inside 16-bit lanes.
    pub fn tuned(&self) -> bool {
        self.shape.depth_multiplier == 1 && crate::quant::narrow_offset(self.input_offset).is_some()
    }

    /// Whether `variant`'s kernel takes these parameters: the Cortex-M4's where
    /// [`tuned`](Self::tuned), the register-blocked one always.
    pub fn takes_tuned(&self, variant: crate::TunedVariant) -> bool {
        match variant {
            crate::TunedVariant::Dsp => self.tuned(),
            crate::TunedVariant::Blocked => true,
        }
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 1, 5)?;
        let od = self.shape.output_depth()?;
        need(binding_lens, 3, od, 4)?;
        need(binding_lens, 4, od, 4)
    }
}

/// `depthwise_conv2d_f32`: float depthwise convolution, as TFLM's
/// `reference_ops::DepthwiseConv`. Words: [`DepthwiseConv2dShape`]'s 15, then `act_min`
/// and `act_max` as `f32` bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthwiseConv2dF32 {
    /// Shapes and window.
    pub shape: DepthwiseConv2dShape,
    /// Lower clamp.
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for DepthwiseConv2dF32 {
    const KERNEL: &'static str = "depthwise_conv2d_f32";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_F32_BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([self.act_min.to_bits(), self.act_max.to_bits()]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = DepthwiseConv2dShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        Ok(Self {
            shape,
            act_min,
            act_max,
        })
    }
}

impl DepthwiseConv2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 4, 3)
    }
}
