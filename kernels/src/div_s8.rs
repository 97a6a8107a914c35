//! int8 DIV with TFLite's broadcasting, as TFLM's `div.cc` runs it (`reference_ops::Div` /
//! `BroadcastDivSlow` for int8): per element the offset divisor's fixed-point reciprocal
//! (`GetReciprocal`, Newton-Raphson), the offset dividend normalized by its count of leading
//! sign bits, their product rescaled once by `input1_scale / (input2_scale * output_scale)`
//! (the ratio in `float`, as TFLM computes it) and the total shift. The float DIV is
//! `arithmetic_f32`'s.
//!
//! TFLM's last step is gemmlowp's `RoundingDivideByPOT` with an exponent that exceeds 31
//! whenever the dividend is small (down to 0): C++ leaves that undefined, and TFLM's x86-64
//! build computes its mask as `(1 << (exponent mod 64)) - 1` truncated to 32 bits and its
//! shift as `x >> (exponent mod 32)`; [`tflm_rounding_divide_by_pot`] reproduces that for
//! every exponent that [`DIV_OUTPUT_SHIFTS`] admits. A zero divisor (the offset input 2
//! zero) is no error in TFLM's release build: its reciprocal is that of `GetReciprocal(0)`
//! (`num_bits_over_unit` -1, `1 / (1 + -1)` by Newton-Raphson), reproduced as it is.
//!
//! Bindings of `div_s8`: 0 input 1, 1 input 2, 2 output (`i8`), sized by the
//! [`BroadcastShape`].

use crate::activation::Activation;
use crate::broadcast::BroadcastShape;
use crate::mul::MulS8;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::saturating_rounding_doubling_high_mul;
use crate::shape::clamp_s8;
use crate::softmax::get_reciprocal;
use hal_core::kernel::KernelError;

/// The output shifts [`DivS8`] accepts: with them the final rounding exponent
/// (`recip_shift + headroom - output_shift`, `recip_shift` in `-1..=8`, headroom in
/// `23..=31`) stays within `0..=63`, where [`tflm_rounding_divide_by_pot`] is TFLM's.
pub const DIV_OUTPUT_SHIFTS: core::ops::RangeInclusive<i32> = -24..=22;

/// `div_s8`. Words: [`MulS8`]'s, which it holds (`output_multiplier` the quantized
/// `input1_scale / (input2_scale * output_scale)`), with offsets within `-128..=128`, the
/// multiplier not negative and `output_shift` in [`DIV_OUTPUT_SHIFTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivS8(MulS8);

/// gemmlowp's `RoundingDivideByPOT` as TFLM's x86-64 build computes it for any `exponent` in
/// `0..=63`: within `0..=31` exactly `quant::rounding_divide_by_pot`; above, the 64-bit mask
/// `(1 << exponent) - 1` truncated to 32 bits and the 32-bit shift by `exponent mod 32`
/// (what `sar` does with an oversized count).
#[inline(always)]
pub fn tflm_rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    let mask = (1i64 << (exponent & 63)).wrapping_sub(1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> (exponent & 31)) + i32::from(remainder > threshold)
}

/// gemmlowp's `CountLeadingSignBits` for `i32` (31 for 0 and -1).
#[inline(always)]
fn count_leading_sign_bits(x: i32) -> u32 {
    (x ^ (x >> 31)).leading_zeros() - 1
}

impl DivS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `CalculateOpDataDiv` computes them (the ratio in `float`).
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
        activation: Activation,
    ) -> Result<Self, KernelError> {
        let real = input1.0 / (input2.0 * output.0);
        let params = Self(MulS8::from_real_multiplier(
            shape,
            f64::from(real),
            input1.1,
            input2.1,
            output,
            activation,
        )?);
        params.validate()?;
        Ok(params)
    }

    /// The parameters with [`MulS8`]'s words, refused outside `div_s8`'s ranges.
    pub fn new(params: MulS8) -> Result<Self, KernelError> {
        let params = Self(params);
        params.validate()?;
        Ok(params)
    }

    fn validate(&self) -> Result<(), KernelError> {
        let MulS8 {
            input1_offset,
            input2_offset,
            output_offset,
            output_multiplier,
            output_shift,
            ..
        } = self.0;
        let offset = -128..=128;
        if !offset.contains(&input1_offset)
            || !offset.contains(&input2_offset)
            || !offset.contains(&output_offset)
        {
            return Err(KernelError::Shape("offset outside -128..=128"));
        }
        if output_multiplier < 0 {
            return Err(KernelError::Shape("negative multiplier"));
        }
        if !DIV_OUTPUT_SHIFTS.contains(&output_shift) {
            return Err(KernelError::Shape("DIV output shift outside -24..=22"));
        }
        Ok(())
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check(binding_lens)
    }

    /// One element, as TFLM's `DivElementwise`.
    #[inline(always)]
    pub fn div(&self, a: i8, b: i8) -> i8 {
        let p = &self.0;
        // Offsets within -128..=128: no overflow.
        let mut dividend = p.input1_offset + i32::from(a);
        let mut divisor = p.input2_offset + i32::from(b);
        if divisor < 0 {
            dividend = -dividend;
            divisor = -divisor;
        }
        let (reciprocal, recip_shift) = get_reciprocal(divisor, 31);
        let headroom = count_leading_sign_bits(dividend);
        // `dividend << headroom`; at 31 (dividend 0 or -1) as C++'s int arithmetic wraps.
        let unscaled = saturating_rounding_doubling_high_mul(
            dividend.wrapping_mul(1i32.wrapping_shl(headroom)),
            reciprocal,
        );
        // In 0..=63 by the shift's range.
        let exponent = (recip_shift + headroom as i32 - p.output_shift) as u32;
        let quotient = tflm_rounding_divide_by_pot(
            saturating_rounding_doubling_high_mul(unscaled, p.output_multiplier),
            exponent,
        );
        clamp_s8(p.output_offset.wrapping_add(quotient), p.act_min, p.act_max)
    }

    /// Runs the division.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.0
            .shape
            .check_and_apply(input1, input2, output, |a, b| self.div(a, b))
    }
}

impl KernelParams for DivS8 {
    const KERNEL: &'static str = "div_s8";
    const BINDINGS: &'static [BindingUse] = MulS8::BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.0.encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        MulS8::decode(words).and_then(Self::new)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn divides_real_values() {
        // Scales 1 in, 1 out, zero points 0: round(a / b).
        let shape = BroadcastShape::new(&[4], &[1]).unwrap();
        let params =
            DivS8::from_quantization(shape, (1.0, 0), (1.0, 0), (1.0, 0), Activation::None)
                .unwrap();
        let mut out = [0i8; 4];
        params.run(&[100, -100, 7, 3], &[4], &mut out).unwrap();
        assert_eq!(out, [25, -25, 2, 1]);
        params.run(&[100, -100, 7, 3], &[-4], &mut out).unwrap();
        assert_eq!(out, [-25, 25, -2, -1]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(DivS8::decode(&mut Words::new(&words)).unwrap(), params);
    }

    #[test]
    fn oversized_exponents_as_tflm_x86() {
        assert_eq!(tflm_rounding_divide_by_pot(5, 1), 3);
        assert_eq!(tflm_rounding_divide_by_pot(-5, 1), -3);
        // Exponent 32: mask all ones, shift by 0: x + 1 for x >= 0, x for x < 0.
        assert_eq!(tflm_rounding_divide_by_pot(0, 32), 1);
        assert_eq!(tflm_rounding_divide_by_pot(1 << 20, 33), (1 << 19) + 1);
        assert_eq!(tflm_rounding_divide_by_pot(-8, 34), -2);
        assert_eq!(count_leading_sign_bits(0), 31);
        assert_eq!(count_leading_sign_bits(-1), 31);
        assert_eq!(count_leading_sign_bits(255), 23);
        assert_eq!(count_leading_sign_bits(-255), 23);
        assert_eq!(count_leading_sign_bits(-256), 23);
    }

    #[test]
    fn refuses_shifts_beyond_tflm_rounding() {
        let shape = BroadcastShape::new(&[1], &[1]).unwrap();
        let mut words = Vec::new();
        shape.encode(&mut words);
        words.extend([0, 0, 0, 1 << 30, 22, -128, 127].map(|v| v as u32));
        assert!(DivS8::decode(&mut Words::new(&words)).is_ok());
        words[12 + 4] = 23;
        assert!(DivS8::decode(&mut Words::new(&words)).is_err());
    }
}
