//! HARD_SWISH on int8, as TFLM's `hard_swish.cc` runs it (`reference_ops::HardSwish` on
//! `HardSwishParams`): 16-bit fixed point throughout. The centered input on a "hires" scale
//! (times 128) is rescaled to the output's scale (before its shift) and, separately, to a
//! "reluish" value in [-1, 1] (3.0 as 32768, saturating), moved to [0, 1], multiplied in,
//! shifted, offset and clamped. The float HARD_SWISH is `activation_f32`'s.
//!
//! Bindings of `hard_swish_s8`: 0 input, 1 output (`i8` each). Element-wise: `output` may
//! alias `input`.

use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::quantize_multiplier;
use hal_core::kernel::KernelError;

/// gemmlowp's `SaturatingRoundingDoublingHighMul` on int16.
fn rounding_doubling_high_mul(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    let product = i32::from(a) * i32::from(b);
    let nudge = if product >= 0 { 1 << 14 } else { 1 - (1 << 14) };
    ((product + nudge) / (1 << 15)) as i16
}

/// TFLM's `SaturatingDoublingHighMul` on int16: the high half rounded toward zero.
fn doubling_high_mul(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    ((i32::from(a) * i32::from(b)) / (1 << 15)) as i16
}

/// TFLM's `SaturatingLeftShift` on int16.
fn saturating_left_shift(value: i16, amount: i32) -> i16 {
    let shifted = i64::from(value) * (1i64 << amount);
    shifted.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
}

/// gemmlowp's `RoundingDivideByPOT` on int16, its masks and sums in int16 as the template
/// computes them (exact for every exponent in `0..=31`).
fn rounding_divide_by_pot(x: i16, exponent: i32) -> i16 {
    let mask = ((1i64 << exponent) - 1) as i16;
    let remainder = x & mask;
    let threshold = ((mask >> 1) as i32 + i32::from(x < 0)) as i16;
    ((i32::from(x) >> exponent) + i32::from(remainder > threshold)) as i16
}

/// TFLM's `DownScaleInt32ToInt16Multiplier`.
fn down_scale(multiplier: i32) -> i16 {
    const ROUNDING: i32 = 1 << 15;
    if multiplier >= i32::MAX - ROUNDING {
        return i16::MAX;
    }
    ((multiplier + ROUNDING) >> 16) as i16
}

/// `hard_swish_s8`. Words: `len`, `input_zero_point`, `output_zero_point`,
/// `output_multiplier` (int16), `output_exponent` (`-31..=0`), `reluish_multiplier`
/// (int16), `reluish_exponent` (`-31..=31`). `decode` refuses a zero length, zero points
/// outside int8, multipliers outside `0..=32767` and exponents outside their ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardSwishS8 {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// `input_scale / 128 / output_scale` in Q15.
    pub output_multiplier: i32,
    /// Its exponent (never above 0).
    pub output_exponent: i32,
    /// `input_scale / 128 / (3 / 32768)` in Q15.
    pub reluish_multiplier: i32,
    /// Its exponent.
    pub reluish_exponent: i32,
}

impl HardSwishS8 {
    const WHAT: &'static str = "hard_swish_s8: zero length, zero points outside int8, multipliers or exponents out of range";

    /// The parameters TFLM's Prepare computes for `len` elements (the scales' products and
    /// quotients in `f32`, `QuantizeMultiplier`, then `DownScaleInt32ToInt16Multiplier`).
    /// Refuses scales that are not positive and finite, an output multiplier above 1
    /// (TFLM's `output_multiplier_exponent <= 0`) and what `decode` refuses.
    pub fn prepare(
        len: usize,
        (input_scale, input_zero_point): (f32, i32),
        (output_scale, output_zero_point): (f32, i32),
    ) -> Result<Self, KernelError> {
        let positive = |scale: f32| scale > 0.0 && scale.is_finite();
        if !positive(input_scale) || !positive(output_scale) {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let hires_input_scale = (1.0f32 / 128.0) * input_scale;
        let reluish_scale = 3.0f32 / 32768.0;
        let (output_multiplier, output_exponent) =
            quantize_multiplier(f64::from(hires_input_scale / output_scale));
        let (reluish_multiplier, reluish_exponent) =
            quantize_multiplier(f64::from(hires_input_scale / reluish_scale));
        Self {
            len,
            input_zero_point,
            output_zero_point,
            output_multiplier: i32::from(down_scale(output_multiplier)),
            output_exponent,
            reluish_multiplier: i32::from(down_scale(reluish_multiplier)),
            reluish_exponent,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 1, Self::WHAT)?;
        let int8 = -128..=127;
        let multipliers = 0..=i32::from(i16::MAX);
        if !int8.contains(&self.input_zero_point)
            || !int8.contains(&self.output_zero_point)
            || !multipliers.contains(&self.output_multiplier)
            || !multipliers.contains(&self.reluish_multiplier)
            || !(-31..=0).contains(&self.output_exponent)
            || !(-31..=31).contains(&self.reluish_exponent)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 and 1 each hold `len` bytes.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<i8, i8>(self.len, binding_lens)
    }

    /// One output of one input, TFLM's steps in int16.
    #[inline]
    pub fn element(&self, x: i8) -> i8 {
        let input_value = (i32::from(x) - self.input_zero_point) as i16;
        let hires = input_value.wrapping_mul(1 << 7);
        let preshift_output = rounding_doubling_high_mul(hires, self.output_multiplier as i16);
        let mut reluish = hires;
        if self.reluish_exponent > 0 {
            reluish = saturating_left_shift(reluish, self.reluish_exponent - 1);
        }
        reluish = rounding_doubling_high_mul(reluish, self.reluish_multiplier as i16);
        if self.reluish_exponent > 0 {
            reluish = saturating_left_shift(reluish, 1);
        }
        if self.reluish_exponent < 0 {
            reluish = rounding_divide_by_pot(reluish, -self.reluish_exponent);
        }
        let reluish = ((i32::from(reluish) + (1 << 15)) >> 1) as i16;
        let preshift = doubling_high_mul(reluish, preshift_output);
        let output = rounding_divide_by_pot(preshift, -self.output_exponent)
            .wrapping_add(self.output_zero_point as i16);
        output.clamp(-128, 127) as i8
    }

    /// Runs the kernel over the first `len` elements of each slice.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        map_elementwise(self.len, input, output, |x| self.element(x))
    }
}

impl KernelParams for HardSwishS8 {
    const KERNEL: &'static str = "hard_swish_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.input_zero_point as u32,
            self.output_zero_point as u32,
            self.output_multiplier as u32,
            self.output_exponent as u32,
            self.reluish_multiplier as u32,
            self.reluish_exponent as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            input_zero_point: words.i32()?,
            output_zero_point: words.i32()?,
            output_multiplier: words.i32()?,
            output_exponent: words.i32()?,
            reluish_multiplier: words.i32()?,
            reluish_exponent: words.i32()?,
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
    fn follows_the_float_curve() {
        // Input and output at 0.05: hard_swish(x) = x * relu6(x + 3) / 6.
        let params = HardSwishS8::prepare(256, (0.05, 0), (0.05, 0)).unwrap();
        let input: Vec<i8> = (-128..=127).collect();
        let mut output = [0i8; 256];
        params.run(&input, &mut output).unwrap();
        for (&x, &y) in input.iter().zip(&output) {
            let real = f32::from(x) * 0.05;
            let want = real * (real + 3.0).clamp(0.0, 6.0) / 6.0 / 0.05;
            assert!(
                (f32::from(y) - want).abs() <= 1.0,
                "{x}: {y} against {want}"
            );
        }
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(HardSwishS8::decode(&mut Words::new(&words)), Ok(params));
        // An output multiplier above 1 (TFLM refuses it).
        assert!(HardSwishS8::prepare(1, (1.0, 0), (0.001, 0)).is_err());
    }

    #[test]
    fn int16_helpers_as_gemmlowp() {
        assert_eq!(rounding_doubling_high_mul(i16::MIN, i16::MIN), i16::MAX);
        assert_eq!(rounding_doubling_high_mul(16384, 16384), 8192);
        assert_eq!(doubling_high_mul(-3, 16384), -1);
        assert_eq!(rounding_divide_by_pot(5, 1), 3);
        assert_eq!(rounding_divide_by_pot(-5, 1), -3);
        assert_eq!(saturating_left_shift(20000, 1), i16::MAX);
        assert_eq!(down_scale(i32::MAX), i16::MAX);
        assert_eq!(down_scale(1 << 30), 1 << 14);
    }
}
