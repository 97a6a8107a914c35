//! PRELU, as TFLM's `prelu.cc` runs it: `x >= 0 ? x : x * alpha`, alpha broadcast to the
//! input (`BroadcastPrelu4DSlow`). `prelu_f32` is a [`BroadcastF32`] kernel (an infinite
//! clamp range); `prelu_s8` rescales the offset input by one multiplier from zero up and
//! its product with the offset alpha by another below, then offsets and clamps to int8.
//!
//! Bindings of both: 0 input, 1 alpha, 2 output (`f32` or `i8` each), sized by the
//! [`BroadcastShape`].

use crate::broadcast::BroadcastShape;
use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use hal_core::kernel::KernelError;

/// PRELU on floats, as the [`BinaryFunctionF32`] of `prelu_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prelu;

impl BinaryFunctionF32 for Prelu {
    const KERNEL: &'static str = "prelu_f32";

    #[inline(always)]
    fn apply(x: f32, alpha: f32) -> f32 {
        if x >= 0.0 {
            x
        } else {
            x * alpha
        }
    }
}

/// `prelu_f32`. Words: [`BroadcastF32`]'s.
pub type PreluF32 = BroadcastF32<Prelu>;

/// `prelu_s8`. Words: [`BroadcastShape`]'s 12, then `input_offset`, `alpha_offset`,
/// `output_offset`, `identity_multiplier`, `identity_shift`, `alpha_multiplier`,
/// `alpha_shift`. `decode` refuses offsets outside `-255..=255` (zero points of int8),
/// negative multipliers and shifts outside `-31..=31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreluS8 {
    /// The input's and alpha's shapes.
    pub shape: BroadcastShape,
    /// Minus the input's zero point.
    pub input_offset: i32,
    /// Minus alpha's zero point.
    pub alpha_offset: i32,
    /// The output's zero point.
    pub output_offset: i32,
    /// `input_scale / output_scale`.
    pub identity_multiplier: i32,
    /// Its shift.
    pub identity_shift: i32,
    /// `input_scale * alpha_scale / output_scale`.
    pub alpha_multiplier: i32,
    /// Its shift.
    pub alpha_shift: i32,
}

impl PreluS8 {
    const WHAT: &'static str = "prelu_s8: offsets out of range, or multipliers/shifts out of range";

    /// The parameters TFLM's Prepare computes (both multipliers from the scales in double).
    /// Refuses scales that are not positive and finite and what `decode` refuses.
    pub fn prepare(
        shape: BroadcastShape,
        (input_scale, input_zero_point): (f32, i32),
        (alpha_scale, alpha_zero_point): (f32, i32),
        (output_scale, output_zero_point): (f32, i32),
    ) -> Result<Self, KernelError> {
        let positive = |scale: f32| scale > 0.0 && scale.is_finite();
        if ![input_scale, alpha_scale, output_scale]
            .into_iter()
            .all(positive)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let (input, alpha, output) = (
            f64::from(input_scale),
            f64::from(alpha_scale),
            f64::from(output_scale),
        );
        let (identity_multiplier, identity_shift) = quantize_multiplier(input / output);
        let (alpha_multiplier, alpha_shift) = quantize_multiplier(input * alpha / output);
        Self {
            shape,
            input_offset: -input_zero_point,
            alpha_offset: -alpha_zero_point,
            output_offset: output_zero_point,
            identity_multiplier,
            identity_shift,
            alpha_multiplier,
            alpha_shift,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        let offsets = -255..=255;
        let shifts = -31..=31;
        if !offsets.contains(&self.input_offset)
            || !offsets.contains(&self.alpha_offset)
            || !offsets.contains(&self.output_offset)
            || self.identity_multiplier < 0
            || self.alpha_multiplier < 0
            || !shifts.contains(&self.identity_shift)
            || !shifts.contains(&self.alpha_shift)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// One output of an input value and its alpha.
    #[inline(always)]
    pub fn element(&self, x: i8, alpha: i8) -> i8 {
        let input = self.input_offset + i32::from(x);
        let scaled = if input >= 0 {
            multiply_by_quantized_multiplier(input, self.identity_multiplier, self.identity_shift)
        } else {
            let alpha = self.alpha_offset + i32::from(alpha);
            multiply_by_quantized_multiplier(input * alpha, self.alpha_multiplier, self.alpha_shift)
        };
        (scaled + self.output_offset).clamp(-128, 127) as i8
    }

    /// Runs the kernel.
    pub fn run(&self, input: &[i8], alpha: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.shape
            .check_and_apply(input, alpha, output, |x, a| self.element(x, a))
    }
}

impl KernelParams for PreluS8 {
    const KERNEL: &'static str = "prelu_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.alpha_offset as u32,
            self.output_offset as u32,
            self.identity_multiplier as u32,
            self.identity_shift as u32,
            self.alpha_multiplier as u32,
            self.alpha_shift as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            shape: BroadcastShape::decode(words)?,
            input_offset: words.i32()?,
            alpha_offset: words.i32()?,
            output_offset: words.i32()?,
            identity_multiplier: words.i32()?,
            identity_shift: words.i32()?,
            alpha_multiplier: words.i32()?,
            alpha_shift: words.i32()?,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn slopes_per_channel() {
        let shape = BroadcastShape::new(&[2, 2], &[2]).unwrap();
        let mut out = [0.0f32; 4];
        PreluF32::new(shape, f32::NEG_INFINITY, f32::INFINITY)
            .run(&[-2.0, -2.0, 3.0, -0.0], &[0.5, 0.25], &mut out)
            .unwrap();
        assert_eq!(out, [-1.0, -0.5, 3.0, -0.0]);
        // int8: input and output at 0.5, alpha at 1/64 with zero point 0.
        let params = PreluS8::prepare(shape, (0.5, 0), (1.0 / 64.0, 0), (0.5, 0)).unwrap();
        let mut out = [0i8; 4];
        params
            .run(&[-64, -64, 100, 0], &[32, 16], &mut out)
            .unwrap();
        assert_eq!(out, [-32, -16, 100, 0]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(PreluS8::decode(&mut Words::new(&words)), Ok(params));
        assert_eq!(PreluS8::KERNEL, "prelu_s8");
    }
}
