//! int8 SQUARED_DIFFERENCE with TFLite's broadcasting, as TFLM's `squared_difference.cc`
//! runs it: both offset inputs shifted left by 7 bits and rescaled to a common scale as
//! int8 ADD's are (multipliers below one), their difference squared in int32 (at most
//! `2^30`), rescaled to the output by `(2 * max_scale)^2 / (2^14 * output_scale)` (a
//! multiplier that may exceed one) and clamped to int8 (no fused activation). The float
//! SQUARED_DIFFERENCE is `arithmetic_f32`'s.
//!
//! Bindings of `squared_difference_s8`: 0 input 1, 1 input 2, 2 output (`i8`), sized by the
//! [`BroadcastShape`].

use crate::add::smaller_than_one;
use crate::broadcast::BroadcastShape;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use crate::shape::{self, clamp_s8};
use hal_core::kernel::KernelError;

/// Bits both offset int8 inputs are shifted left by (TFLM: `255^2 << 14` fits in int32).
pub const SQUARED_DIFFERENCE_LEFT_SHIFT: i32 = 7;

/// `squared_difference_s8`. Words: [`BroadcastShape`]'s 12, then `input1_offset`,
/// `input1_multiplier`, `input1_shift` (`-31..=0`), `input2_offset`, `input2_multiplier`,
/// `input2_shift` (`-31..=0`), `output_offset`, `output_multiplier`, `output_shift`
/// (`-31..=30`). Offsets within `-128..=128`, multipliers not negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SquaredDifferenceS8 {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
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
    /// The output's multiplier (`(2 * max_scale)^2 / (2^14 * output_scale)`).
    pub output_multiplier: i32,
    /// The output's shift.
    pub output_shift: i32,
}

impl SquaredDifferenceS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `PrepareQuantized` computes them for int8 (in `double`; `2^14 * output_scale`
    /// in `float`, which is exact).
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
    ) -> Result<Self, KernelError> {
        let twice_max = 2.0 * f64::from(input1.0.max(input2.0));
        let (input1_multiplier, input1_shift) = smaller_than_one(f64::from(input1.0) / twice_max)?;
        let (input2_multiplier, input2_shift) = smaller_than_one(f64::from(input2.0) / twice_max)?;
        let denominator = f64::from((1 << (2 * SQUARED_DIFFERENCE_LEFT_SHIFT)) as f32 * output.0);
        let (output_multiplier, output_shift) =
            quantize_multiplier(twice_max * twice_max / denominator);
        let params = Self {
            shape,
            input1_offset: -input1.1,
            input1_multiplier,
            input1_shift,
            input2_offset: -input2.1,
            input2_multiplier,
            input2_shift,
            output_offset: output.1,
            output_multiplier,
            output_shift,
        };
        params.validate()?;
        Ok(params)
    }

    fn validate(&self) -> Result<(), KernelError> {
        let offset = -128..=128;
        if ![self.input1_offset, self.input2_offset, self.output_offset]
            .iter()
            .all(|o| offset.contains(o))
        {
            return Err(KernelError::Shape("offset outside -128..=128"));
        }
        if [
            self.input1_multiplier,
            self.input2_multiplier,
            self.output_multiplier,
        ]
        .iter()
        .any(|&m| m < 0)
        {
            return Err(KernelError::Shape("negative multiplier"));
        }
        if !(-31..=0).contains(&self.input1_shift) || !(-31..=0).contains(&self.input2_shift) {
            return Err(KernelError::Shape("input shift outside -31..=0"));
        }
        shape::shift_ok(self.output_shift)
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// One element, as TFLM's quantized `SquaredDifference`.
    #[inline(always)]
    pub fn squared_difference(&self, a: i8, b: i8) -> i8 {
        let a = (self.input1_offset + i32::from(a)) << SQUARED_DIFFERENCE_LEFT_SHIFT;
        let b = (self.input2_offset + i32::from(b)) << SQUARED_DIFFERENCE_LEFT_SHIFT;
        let a = multiply_by_quantized_multiplier(a, self.input1_multiplier, self.input1_shift);
        let b = multiply_by_quantized_multiplier(b, self.input2_multiplier, self.input2_shift);
        // TFLM's input multipliers are at most 1/2, so |a - b| <= 2^15 and the square
        // fits; other parameters wrap, as the WGSL kernel does.
        let diff = a.wrapping_sub(b);
        let out = multiply_by_quantized_multiplier(
            diff.wrapping_mul(diff),
            self.output_multiplier,
            self.output_shift,
        );
        clamp_s8(out.wrapping_add(self.output_offset), -128, 127)
    }

    /// Runs the squared difference.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.shape
            .check_and_apply(input1, input2, output, |a, b| self.squared_difference(a, b))
    }
}

impl KernelParams for SquaredDifferenceS8 {
    const KERNEL: &'static str = "squared_difference_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend(
            [
                self.input1_offset,
                self.input1_multiplier,
                self.input1_shift,
                self.input2_offset,
                self.input2_multiplier,
                self.input2_shift,
                self.output_offset,
                self.output_multiplier,
                self.output_shift,
            ]
            .map(|v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = BroadcastShape::decode(w)?;
        let params = Self {
            shape,
            input1_offset: w.i32()?,
            input1_multiplier: w.i32()?,
            input1_shift: w.i32()?,
            input2_offset: w.i32()?,
            input2_multiplier: w.i32()?,
            input2_shift: w.i32()?,
            output_offset: w.i32()?,
            output_multiplier: w.i32()?,
            output_shift: w.i32()?,
        };
        params.validate()?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn squares_real_differences() {
        // Scales 0.1 in, 0.1 out, zero points 0: (a - b)^2 / 10 in steps of 0.1.
        let shape = BroadcastShape::new(&[3], &[1]).unwrap();
        let params =
            SquaredDifferenceS8::from_quantization(shape, (0.1, 0), (0.1, 0), (0.1, 0)).unwrap();
        let mut out = [0i8; 3];
        params.run(&[10, -20, 127], &[0], &mut out).unwrap();
        assert_eq!(out, [10, 40, 127]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(
            SquaredDifferenceS8::decode(&mut Words::new(&words)).unwrap(),
            params
        );
    }
}
