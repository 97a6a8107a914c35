//! ADD with TFLite's broadcasting: TFLM's `reference_integer_ops::Add`/`BroadcastAdd6DSlow`
//! (int8: both inputs rescaled to a common scale after a left shift of 20 bits, summed,
//! rescaled to the output) and `reference_ops::Add`/`BroadcastAdd6DSlow` (float).
//!
//! Bindings of `add_s8` and of `add_f32`'s broadcasting form: 0 input 1, 1 input 2, 2 output
//! (`i8` or `f32`), sized by the [`BroadcastShape`].

use crate::activation::Activation;
use crate::broadcast::BroadcastShape;
use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier, Rescale};
use crate::shape::{self, clamp_s8};
use hal_core::kernel::KernelError;

/// `add_s8`. Words: [`BroadcastShape`]'s 12, then `left_shift`, `input1_offset`,
/// `input1_multiplier`, `input1_shift`, `input2_offset`, `input2_multiplier`,
/// `input2_shift`, `output_offset`, `output_multiplier`, `output_shift`, `act_min`,
/// `act_max`. Shifts are TFLite exponents (negative: right), within `-31..=0`;
/// `left_shift` within `0..=30`. (Held by [`SquaredDifferenceS8`], the output shift may be
/// up to 30.)
///
/// [`SquaredDifferenceS8`]: crate::squared_difference_s8::SquaredDifferenceS8
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddS8 {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    /// Bits both offset inputs are shifted left by (TFLM: 20 for int8).
    pub left_shift: i32,
    /// `-input1_zero_point`.
    pub input1_offset: i32,
    /// Input 1's multiplier (`input1_scale / (2 * max_scale)`).
    pub input1_multiplier: i32,
    /// Input 1's shift.
    pub input1_shift: i32,
    /// `-input2_zero_point`.
    pub input2_offset: i32,
    /// Input 2's multiplier.
    pub input2_multiplier: i32,
    /// Input 2's shift.
    pub input2_shift: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// The output's multiplier (`2 * max_scale / (2^left_shift * output_scale)`).
    pub output_multiplier: i32,
    /// The output's shift.
    pub output_shift: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

/// TFLM's `QuantizeMultiplierSmallerThanOneExp`: refuses multipliers outside `(0, 1)`
/// (TFLM aborts) and shifts above 0.
pub(crate) fn smaller_than_one(real: f64) -> Result<(i32, i32), KernelError> {
    if !(real > 0.0 && real < 1.0) {
        return Err(KernelError::Shape("multiplier not within (0, 1)"));
    }
    let (m, s) = quantize_multiplier(real);
    if s > 0 {
        return Err(KernelError::Shape("multiplier not within (0, 1)"));
    }
    Ok((m, s))
}

/// The real multipliers of [`AddS8`]'s three rescales: each input's to the common scale,
/// the combined value's to the output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RealMultipliers {
    /// Input 1's (`input1_scale / (2 * max_scale)` for ADD).
    pub input1: f64,
    /// Input 2's.
    pub input2: f64,
    /// The output's.
    pub output: f64,
}

impl AddS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `CalculateOpDataAdd` computes them for int8 (`left_shift` 20; the ratios in
    /// `double`).
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
        activation: Activation,
    ) -> Result<Self, KernelError> {
        let left_shift = 20;
        let twice_max = 2.0 * f64::from(input1.0.max(input2.0));
        let reals = RealMultipliers {
            input1: f64::from(input1.0) / twice_max,
            input2: f64::from(input2.0) / twice_max,
            output: twice_max / (f64::from(1 << left_shift) * f64::from(output.0)),
        };
        let act_range = activation.range_s8(output.0, output.1)?;
        Self::from_real_multipliers(
            shape,
            left_shift,
            reals,
            [input1.1, input2.1, output.1],
            act_range,
            smaller_than_one,
        )
    }

    /// The parameters from the three rescales' real multipliers, the zero points (input 1,
    /// input 2, output) and the clamp: the input multipliers quantized as TFLM's
    /// `QuantizeMultiplierSmallerThanOneExp`, the output's by `quantize_output`.
    pub(crate) fn from_real_multipliers(
        shape: BroadcastShape,
        left_shift: i32,
        reals: RealMultipliers,
        [input1_zero_point, input2_zero_point, output_zero_point]: [i32; 3],
        (act_min, act_max): (i32, i32),
        quantize_output: impl Fn(f64) -> Result<(i32, i32), KernelError>,
    ) -> Result<Self, KernelError> {
        let (input1_multiplier, input1_shift) = smaller_than_one(reals.input1)?;
        let (input2_multiplier, input2_shift) = smaller_than_one(reals.input2)?;
        let (output_multiplier, output_shift) = quantize_output(reals.output)?;
        Ok(Self {
            shape,
            left_shift,
            input1_offset: input1_zero_point.wrapping_neg(),
            input1_multiplier,
            input1_shift,
            input2_offset: input2_zero_point.wrapping_neg(),
            input2_multiplier,
            input2_shift,
            output_offset: output_zero_point,
            output_multiplier,
            output_shift,
            act_min,
            act_max,
        })
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// One element, as TFLM's `AddFunc`.
    #[inline(always)]
    pub fn add(&self, a: i8, b: i8) -> i8 {
        self.add_with(&self.rescales(), a, b)
    }

    /// The three rescales (input 1, input 2, output) in their one-multiply form, where
    /// each multiplier is not negative (as TFLM's quantizer gives them); `None` otherwise.
    pub(crate) fn rescales(&self) -> Option<[Rescale; 3]> {
        Some([
            Rescale::new(self.input1_multiplier, self.input1_shift)?,
            Rescale::new(self.input2_multiplier, self.input2_shift)?,
            Rescale::new(self.output_multiplier, self.output_shift)?,
        ])
    }

    /// [`add`](Self::add) given [`rescales`](Self::rescales).
    #[inline(always)]
    fn add_with(&self, rescales: &Option<[Rescale; 3]>, a: i8, b: i8) -> i8 {
        self.combine_with(rescales, a, b, i32::wrapping_add)
    }

    /// `combine` of the two rescaled inputs, rescaled to the output and clamped, given
    /// [`rescales`](Self::rescales): the one-multiply forms where present, TFLM's steps
    /// where not. ADD combines by the sum, SUB by the difference, SQUARED_DIFFERENCE by the
    /// squared difference.
    #[inline(always)]
    pub(crate) fn combine_with(
        &self,
        rescales: &Option<[Rescale; 3]>,
        a: i8,
        b: i8,
        combine: impl Fn(i32, i32) -> i32,
    ) -> i8 {
        let a = self
            .input1_offset
            .wrapping_add(i32::from(a))
            .wrapping_mul(1 << self.left_shift);
        let b = self
            .input2_offset
            .wrapping_add(i32::from(b))
            .wrapping_mul(1 << self.left_shift);
        let out = match rescales {
            Some([first, second, output]) => output.apply(combine(first.apply(a), second.apply(b))),
            None => {
                let a =
                    multiply_by_quantized_multiplier(a, self.input1_multiplier, self.input1_shift);
                let b =
                    multiply_by_quantized_multiplier(b, self.input2_multiplier, self.input2_shift);
                multiply_by_quantized_multiplier(
                    combine(a, b),
                    self.output_multiplier,
                    self.output_shift,
                )
            }
        };
        clamp_s8(
            out.wrapping_add(self.output_offset),
            self.act_min,
            self.act_max,
        )
    }

    /// Runs the addition.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        let rescales = self.rescales();
        self.shape.check_and_apply(input1, input2, output, |a, b| {
            self.add_with(&rescales, a, b)
        })
    }
}

impl KernelParams for AddS8 {
    const KERNEL: &'static str = "add_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend(
            [
                self.left_shift,
                self.input1_offset,
                self.input1_multiplier,
                self.input1_shift,
                self.input2_offset,
                self.input2_multiplier,
                self.input2_shift,
                self.output_offset,
                self.output_multiplier,
                self.output_shift,
                self.act_min,
                self.act_max,
            ]
            .map(|v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = BroadcastShape::decode(w)?;
        let left_shift = w.i32()?;
        if !(0..=30).contains(&left_shift) {
            return Err(KernelError::Shape("left shift outside 0..=30"));
        }
        let smaller = |w: &mut Words<'_>| -> Result<(i32, i32), KernelError> {
            let m = w.i32()?;
            let s = w.i32()?;
            if !(-31..=0).contains(&s) {
                return Err(KernelError::Shape("shift outside -31..=0"));
            }
            Ok((m, s))
        };
        let input1_offset = w.i32()?;
        let (input1_multiplier, input1_shift) = smaller(w)?;
        let input2_offset = w.i32()?;
        let (input2_multiplier, input2_shift) = smaller(w)?;
        let output_offset = w.i32()?;
        let (output_multiplier, output_shift) = smaller(w)?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        Ok(Self {
            shape,
            left_shift,
            input1_offset,
            input1_multiplier,
            input1_shift,
            input2_offset,
            input2_multiplier,
            input2_shift,
            output_offset,
            output_multiplier,
            output_shift,
            act_min,
            act_max,
        })
    }
}

/// The float ADD: the built-in `add_f32` ([`builtin::ADD_F32`](crate::builtin::ADD_F32))
/// given these words, `clamp(a + b)` with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type AddF32 = BroadcastF32<Add>;

/// Sum, as the [`BinaryFunctionF32`] of ADD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Add;

impl BinaryFunctionF32 for Add {
    const KERNEL: &'static str = "add_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a + b
    }
}
