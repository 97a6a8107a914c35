//! CONV_2D's spec: the shapes and window, the parameters of both element types and their
//! word encoding, and the binding checks every variant runs behind.

use crate::padding::Window;
use crate::params::{BindingUse, KernelParams, Words, WEIGHTED_F32_BINDINGS, WEIGHTED_S8_BINDINGS};
use crate::quant::quantize_multiplier;
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// A convolution's shapes and window, shared by both element types. Encoded as 17 words:
/// `batches, input_height, input_width, input_depth, filter_height, filter_width,
/// filter_depth, output_height, output_width, output_depth`, the [`Window`]'s six words,
/// then `has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2dShape {
    /// Batches (`N`).
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels: a multiple of `filter_depth` (the group count is the quotient).
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Filter input channels (the filter's `I`).
    pub filter_depth: usize,
    /// Output height (the output tensor's, as TFLM loops over it).
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Output channels: a multiple of the group count.
    pub output_depth: usize,
    /// Strides, dilations, padding.
    pub window: Window,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl Conv2dShape {
    /// Output rows: one per batch and output row, each `output_width` pixels.
    pub fn rows(&self) -> Result<usize, KernelError> {
        shape::product(&[self.batches, self.output_height])
    }

    /// Elements of one output row.
    pub fn row_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.output_width, self.output_depth])
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.input_depth as u32,
            self.filter_height as u32,
            self.filter_width as u32,
            self.filter_depth as u32,
            self.output_height as u32,
            self.output_width as u32,
            self.output_depth as u32,
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
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            filter_depth: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            output_depth: shape::dim(w)?,
            window: Window::decode(w)?,
            has_bias: shape::flag(w)?,
        };
        if s.input_depth % s.filter_depth != 0 {
            return Err(KernelError::Shape(
                "input depth not a multiple of filter depth",
            ));
        }
        if s.output_depth % (s.input_depth / s.filter_depth) != 0 {
            return Err(KernelError::Shape(
                "output depth not a multiple of the groups",
            ));
        }
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
        shape::product(&[
            self.output_depth,
            self.filter_height,
            self.filter_width,
            self.filter_depth,
        ])
    }

    /// Output elements.
    pub fn output_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.output_height,
            self.output_width,
            self.output_depth,
        ])
    }

    fn check_common(
        &self,
        lens: &[usize],
        elem: usize,
        out_index: usize,
    ) -> Result<(), KernelError> {
        need(lens, 0, self.input_len()?, elem)?;
        need(lens, 1, self.filter_len()?, elem)?;
        if self.has_bias {
            need(lens, 2, self.output_depth, 4)?;
        }
        need(lens, out_index, self.output_len()?, elem)
    }

    /// Whether every filter tap of every output lies inside the input (no padding is ever
    /// read): then each output channel's products meet the same weights at every output
    /// position, and an input offset can fold into the bias.
    pub fn taps_inside_input(&self) -> bool {
        let w = &self.window;
        let inside = |out: usize, stride: usize, filter: usize, dilation: usize, input: usize| {
            out == 0
                || filter == 0
                || (out - 1)
                    .checked_mul(stride)
                    .and_then(|last| last.checked_add((filter - 1).checked_mul(dilation)?))
                    .is_some_and(|last| last < input)
        };
        w.pad_height == 0
            && w.pad_width == 0
            && inside(
                self.output_height,
                w.stride_height,
                self.filter_height,
                w.dilation_height,
                self.input_height,
            )
            && inside(
                self.output_width,
                w.stride_width,
                self.filter_width,
                w.dilation_width,
                self.input_width,
            )
    }
}

/// The `filter_hwio` word: 0 or 1, and 1 only without groups.
fn hwio_flag(w: &mut Words<'_>, shape: &Conv2dShape) -> Result<bool, KernelError> {
    let hwio = shape::flag(w)?;
    hwio_fits(hwio, shape)?;
    Ok(hwio)
}

/// An HWIO filter only without groups (its loops index the filter by `input_depth`).
fn hwio_fits(hwio: bool, shape: &Conv2dShape) -> Result<(), KernelError> {
    if hwio && shape.filter_depth != shape.input_depth {
        return Err(KernelError::Shape(
            "conv2d: an HWIO filter needs filter_depth == input_depth",
        ));
    }
    Ok(())
}

/// `conv2d_s8`: int8 convolution with per-output-channel requantization, as TFLM's
/// `ConvPerChannel` (a per-tensor filter scale is broadcast over the channels at import).
/// Words: [`Conv2dShape`]'s 17, then `input_offset` (`-input_zero_point`),
/// `output_offset` (`output_zero_point`), `act_min`, `act_max`, `filter_hwio` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2dS8 {
    /// Shapes and window.
    pub shape: Conv2dShape,
    /// The filter is laid out `[filter_height, filter_width, filter_depth, output_depth]`
    /// (every output channel of one tap together, transposed at import) rather than
    /// TFLite's `[output_depth, filter_height, filter_width, filter_depth]`; only without
    /// groups (`filter_depth == input_depth`). Each output pixel then accumulates all its
    /// channels at once over contiguous weights, which vectorizes however shallow the
    /// input (a first layer over one channel).
    pub filter_hwio: bool,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp ([`Activation::range_s8`](crate::activation::Activation::range_s8)).
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for Conv2dS8 {
    const KERNEL: &'static str = "conv2d_s8";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_S8_BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
            u32::from(self.filter_hwio),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = Conv2dShape::decode(w)?;
        let input_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        let filter_hwio = hwio_flag(w, &shape)?;
        Ok(Self {
            shape,
            filter_hwio,
            input_offset,
            output_offset,
            act_min,
            act_max,
        })
    }
}

/// TFLM's per-channel requantization of a convolution (`PopulateConvolutionQuantizationParams`):
/// for each channel `i`, `quantize_multiplier(input_scale * filter_scale[i] / output_scale)`
/// computed in `f64` from the `f32` scales. `filter_scales` holds one scale (per-tensor:
/// broadcast to every channel) or one per channel; `multipliers` and `shifts` are the
/// outputs, one per output channel. Refuses mismatched lengths.
pub fn per_channel_multipliers(
    input_scale: f32,
    filter_scales: &[f32],
    output_scale: f32,
    multipliers: &mut [i32],
    shifts: &mut [i32],
) -> Result<(), KernelError> {
    let n = multipliers.len();
    if shifts.len() != n || !(filter_scales.len() == 1 || filter_scales.len() == n) {
        return Err(KernelError::Shape("per-channel scale count mismatch"));
    }
    for (i, (m, s)) in multipliers.iter_mut().zip(shifts.iter_mut()).enumerate() {
        let scale = if filter_scales.len() == 1 {
            filter_scales[0]
        } else {
            filter_scales[i]
        };
        let effective = f64::from(input_scale) * f64::from(scale) / f64::from(output_scale);
        (*m, *s) = quantize_multiplier(effective);
    }
    Ok(())
}

/// The largest patch (`filter_height * filter_width * filter_depth`) the Cortex-M4 kernel
/// takes; larger ones run the portable loops. 1,152 covers a 3×3 convolution over 128
/// channels; its scratch (two widened patches and one gathered: 5.8 KB) is lent by the
/// static program, which plans it ([`Conv2dS8::tuned_scratch`]).
pub const MAX_TUNED_PATCH: usize = 1152;

/// The largest patch the Cortex-M4 kernel widens on its own stack where it is lent no
/// scratch (1.3 KB of stack): 256 covers a 1×1 convolution over 256 channels and a 3×3
/// over 28. A larger patch without scratch runs the portable loops.
pub const MAX_STACK_PATCH: usize = 256;

impl Conv2dS8 {
    /// The scratch the Cortex-M4 kernel (`dsp.rs`) uses for these parameters, as
    /// [`Scratch`](crate::scratch::Scratch) groups and bytes: two pixels' widened patches
    /// (`patch / 4` groups) and one patch of gathered taps (`patch` bytes); `(0, 0)` where
    /// that kernel does not run (an HWIO filter, groups, a patch over [`MAX_TUNED_PATCH`],
    /// an input offset outside 16-bit lanes). Given less, the kernel uses its stack.
    pub fn tuned_scratch(&self) -> (usize, usize) {
        let s = &self.shape;
        let patch = s.filter_height * s.filter_width * s.filter_depth;
        let tuned = !self.filter_hwio
            && s.filter_depth == s.input_depth
            && crate::quant::narrow_offset(self.input_offset).is_some()
            && patch > 0
            && patch <= MAX_TUNED_PATCH;
        if tuned {
            (patch / 4, patch)
        } else {
            (0, 0)
        }
    }

    /// Whether the Cortex-M4 kernel (`dsp.rs`) takes these parameters: where it asks for
    /// scratch ([`tuned_scratch`](Self::tuned_scratch)).
    pub fn tuned(&self) -> bool {
        self.tuned_scratch() != (0, 0)
    }

    /// Whether `variant`'s kernel takes these parameters: the Cortex-M4's where
    /// [`tuned`](Self::tuned), the register-blocked one over an HWIO filter.
    pub fn takes_tuned(&self, variant: crate::TunedVariant) -> bool {
        match variant {
            crate::TunedVariant::Dsp => self.tuned(),
            crate::TunedVariant::Blocked => self.filter_hwio,
        }
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        hwio_fits(self.filter_hwio, &self.shape)?;
        self.shape.check_common(binding_lens, 1, 5)?;
        need(binding_lens, 3, self.shape.output_depth, 4)?;
        need(binding_lens, 4, self.shape.output_depth, 4)
    }
}

/// `conv2d_f32`: float convolution, as TFLM's `reference_ops::Conv`: the products summed
/// in TFLM's loop order from 0, then the bias, then the clamp. Words: [`Conv2dShape`]'s
/// 17, then `act_min` and `act_max` as `f32` bits, then `filter_hwio` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conv2dF32 {
    /// Shapes and window.
    pub shape: Conv2dShape,
    /// The filter is laid out HWIO, as [`Conv2dS8::filter_hwio`]; each output still sums
    /// its products in TFLM's order.
    pub filter_hwio: bool,
    /// Lower clamp ([`Activation::range_f32`](crate::activation::Activation::range_f32)).
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for Conv2dF32 {
    const KERNEL: &'static str = "conv2d_f32";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_F32_BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.act_min.to_bits(),
            self.act_max.to_bits(),
            u32::from(self.filter_hwio),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = Conv2dShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        let filter_hwio = hwio_flag(w, &shape)?;
        Ok(Self {
            shape,
            filter_hwio,
            act_min,
            act_max,
        })
    }
}

impl Conv2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        hwio_fits(self.filter_hwio, &self.shape)?;
        self.shape.check_common(binding_lens, 4, 3)
    }
}
