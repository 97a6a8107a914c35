//! MUL with TFLite's broadcasting: TFLM's `reference_integer_ops::Mul`/`BroadcastMul6DSlow`
//! (int8: the product of the offset inputs rescaled once) and `reference_ops::Mul` (float).
//!
//! Bindings of `mul_s8` and of `mul_f32`'s broadcasting form: 0 input 1, 1 input 2, 2 output
//! (`i8` or `f32`), sized by the [`BroadcastShape`].

use crate::activation::Activation;
use crate::broadcast::BroadcastShape;
use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use crate::shape::{self, clamp_s8};
use hal_core::kernel::KernelError;

/// `mul_s8`. Words: [`BroadcastShape`]'s 12, then `input1_offset`, `input2_offset`,
/// `output_offset`, `output_multiplier`, `output_shift` (`-31..=30`), `act_min`, `act_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MulS8 {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    /// `-input1_zero_point`.
    pub input1_offset: i32,
    /// `-input2_zero_point`.
    pub input2_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// `input1_scale * input2_scale / output_scale`, quantized.
    pub output_multiplier: i32,
    /// Its shift.
    pub output_shift: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl MulS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `CalculateOpDataMul` computes them (the scales multiplied in `f64`).
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
        activation: Activation,
    ) -> Result<Self, KernelError> {
        let real = f64::from(input1.0) * f64::from(input2.0) / f64::from(output.0);
        Self::from_real_multiplier(shape, real, input1.1, input2.1, output, activation)
    }

    /// The parameters from the real output multiplier, the inputs' zero points and the
    /// output's quantization (`(scale, zero_point)`): MUL's and DIV's common part.
    pub(crate) fn from_real_multiplier(
        shape: BroadcastShape,
        real: f64,
        input1_zero_point: i32,
        input2_zero_point: i32,
        output: (f32, i32),
        activation: Activation,
    ) -> Result<Self, KernelError> {
        let (output_multiplier, output_shift) = quantize_multiplier(real);
        shape::shift_ok(output_shift)?;
        let (act_min, act_max) = activation.range_s8(output.0, output.1)?;
        Ok(Self {
            shape,
            input1_offset: input1_zero_point.wrapping_neg(),
            input2_offset: input2_zero_point.wrapping_neg(),
            output_offset: output.1,
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

    /// One element, as TFLM's `MulElementwise`.
    #[inline(always)]
    pub fn mul(&self, a: i8, b: i8) -> i8 {
        let a = self.input1_offset.wrapping_add(i32::from(a));
        let b = self.input2_offset.wrapping_add(i32::from(b));
        let out = multiply_by_quantized_multiplier(
            a.wrapping_mul(b),
            self.output_multiplier,
            self.output_shift,
        )
        .wrapping_add(self.output_offset);
        clamp_s8(out, self.act_min, self.act_max)
    }

    /// Runs the multiplication.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.shape
            .check_and_apply(input1, input2, output, |a, b| self.mul(a, b))
    }
}

impl KernelParams for MulS8 {
    const KERNEL: &'static str = "mul_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend(
            [
                self.input1_offset,
                self.input2_offset,
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
        let input1_offset = w.i32()?;
        let input2_offset = w.i32()?;
        let output_offset = w.i32()?;
        let output_multiplier = w.i32()?;
        let output_shift = shape::shift(w)?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        Ok(Self {
            shape,
            input1_offset,
            input2_offset,
            output_offset,
            output_multiplier,
            output_shift,
            act_min,
            act_max,
        })
    }
}

/// The float MUL: the built-in `mul_f32` ([`builtin::MUL_F32`](crate::builtin::MUL_F32))
/// given these words, `clamp(a * b)` with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type MulF32 = BroadcastF32<Mul>;

/// Product, as the [`BinaryFunctionF32`] of MUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mul;

impl BinaryFunctionF32 for Mul {
    const KERNEL: &'static str = "mul_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a * b
    }
}
