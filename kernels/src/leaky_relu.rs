//! LEAKY_RELU, as TFLM's `leaky_relu.cc` runs it: `leaky_relu_f32` through
//! `reference_ops::LeakyRelu` (`x > 0 ? x : x * alpha`, any alpha), `leaky_relu_s8` through
//! `reference_ops::QuantizeLeakyRelu` (the centered input rescaled by the identity
//! multiplier from zero up, by alpha's below, negated for a negative alpha, then offset and
//! clamped to int8).
//!
//! Bindings, both kernels: 0 `input` (`len` `f32` / `i8`), 1 `output` (`len`, the same
//! type). Element-wise: `output` may alias `input`.

use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use hal_core::kernel::KernelError;

/// `leaky_relu_f32`: `x > 0 ? x : x * alpha`.
///
/// Words: `len`, `alpha` (its `f32` bits). `decode` refuses a zero or overflowing length
/// and a NaN or infinite alpha.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeakyReluF32 {
    /// Elements.
    pub len: usize,
    /// The slope below zero.
    pub alpha: f32,
}

impl LeakyReluF32 {
    const WHAT: &'static str = "leaky_relu_f32: zero or overflowing length, or alpha not finite";

    /// The parameters for `len` elements.
    pub fn prepare(len: usize, alpha: f32) -> Result<Self, KernelError> {
        byte_len(len, 4, Self::WHAT)?;
        if !alpha.is_finite() {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(Self { len, alpha })
    }

    /// Bindings 0 and 1 each hold `len` floats.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<f32, f32>(self.len, binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        let alpha = self.alpha;
        map_elementwise(
            self.len,
            input,
            output,
            |x| if x > 0.0 { x } else { x * alpha },
        )
    }
}

impl KernelParams for LeakyReluF32 {
    const KERNEL: &'static str = "leaky_relu_f32";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.len as u32, self.alpha.to_bits()]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::prepare(words.usize()?, words.f32()?)
    }
}

/// `leaky_relu_s8`: TFLM's `QuantizeLeakyRelu` on int8.
///
/// Words: `len`, `input_zero_point`, `output_zero_point`, `identity_multiplier`,
/// `identity_shift`, `alpha_multiplier` (negative for a negative alpha), `alpha_shift`.
/// `decode` refuses a zero length, zero points outside int8, a negative identity multiplier,
/// an alpha multiplier of `i32::MIN` (whose magnitude TFLM cannot take) and shifts outside
/// `-31..=31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakyReluS8 {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// `input_scale / output_scale` as a Q31 multiplier.
    pub identity_multiplier: i32,
    /// Its exponent.
    pub identity_shift: i32,
    /// `input_scale * alpha / output_scale` as a signed Q31 multiplier.
    pub alpha_multiplier: i32,
    /// Its exponent.
    pub alpha_shift: i32,
}

impl LeakyReluS8 {
    const WHAT: &'static str =
        "leaky_relu_s8: zero length, zero points outside int8, or multipliers/shifts out of range";

    /// The parameters TFLM's Prepare computes for `len` elements: `QuantizeMultiplier` of
    /// `input_scale * alpha / output_scale` and of `input_scale / output_scale`, each
    /// computed in `f32` and widened. Refuses scales that are not positive and finite, a
    /// NaN or infinite alpha and what `decode` refuses.
    pub fn prepare(
        len: usize,
        alpha: f32,
        (input_scale, input_zero_point): (f32, i32),
        (output_scale, output_zero_point): (f32, i32),
    ) -> Result<Self, KernelError> {
        let positive = |scale: f32| scale > 0.0 && scale.is_finite();
        let alpha_ratio = input_scale * alpha / output_scale;
        if !positive(input_scale) || !positive(output_scale) || !alpha_ratio.is_finite() {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let (identity_multiplier, identity_shift) =
            quantize_multiplier(f64::from(input_scale / output_scale));
        let (alpha_multiplier, alpha_shift) = quantize_multiplier(f64::from(alpha_ratio));
        Self {
            len,
            input_zero_point,
            output_zero_point,
            identity_multiplier,
            identity_shift,
            alpha_multiplier,
            alpha_shift,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 1, Self::WHAT)?;
        let int8 = -128..=127;
        let shifts = -31..=31;
        if !int8.contains(&self.input_zero_point)
            || !int8.contains(&self.output_zero_point)
            || self.identity_multiplier < 0
            || self.alpha_multiplier == i32::MIN
            || !shifts.contains(&self.identity_shift)
            || !shifts.contains(&self.alpha_shift)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 and 1 each hold `len` bytes.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<i8, i8>(self.len, binding_lens)
    }

    /// One output of one input.
    #[inline(always)]
    pub fn element(&self, x: i8) -> i8 {
        let centered = i32::from(x) - self.input_zero_point;
        let scaled = if centered >= 0 {
            multiply_by_quantized_multiplier(
                centered,
                self.identity_multiplier,
                self.identity_shift,
            )
        } else {
            let magnitude = multiply_by_quantized_multiplier(
                centered,
                self.alpha_multiplier.abs(),
                self.alpha_shift,
            );
            if self.alpha_multiplier < 0 {
                magnitude.wrapping_neg()
            } else {
                magnitude
            }
        };
        scaled.wrapping_add(self.output_zero_point).clamp(-128, 127) as i8
    }

    /// Runs the kernel over the first `len` elements of each slice.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        map_elementwise(self.len, input, output, |x| self.element(x))
    }
}

impl KernelParams for LeakyReluS8 {
    const KERNEL: &'static str = "leaky_relu_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.input_zero_point as u32,
            self.output_zero_point as u32,
            self.identity_multiplier as u32,
            self.identity_shift as u32,
            self.alpha_multiplier as u32,
            self.alpha_shift as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            input_zero_point: words.i32()?,
            output_zero_point: words.i32()?,
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
    fn float_slopes_below_zero() {
        let params = LeakyReluF32::prepare(4, 0.2).unwrap();
        let mut out = [0.0f32; 4];
        params.run(&[-5.0, -0.0, 0.5, 3.0], &mut out).unwrap();
        assert_eq!(out, [-1.0, -0.0, 0.5, 3.0]);
        let negative = LeakyReluF32::prepare(1, -2.0).unwrap();
        let mut out = [0.0f32; 1];
        negative.run(&[-1.5], &mut out).unwrap();
        assert_eq!(out, [3.0]);
        assert!(LeakyReluF32::prepare(1, f32::NAN).is_err());
    }

    #[test]
    fn int8_rescales_each_side() {
        // One scale: the identity above the zero point, a fifth below it.
        let params = LeakyReluS8::prepare(5, 0.2, (0.5, 3), (0.5, 3)).unwrap();
        let mut out = [0i8; 5];
        params.run(&[3, 13, -7, -128, 127], &mut out).unwrap();
        assert_eq!(out, [3, 13, 1, -23, 127]);
        // A negative alpha reflects the negative side.
        let params = LeakyReluS8::prepare(2, -1.0, (0.5, 0), (0.5, 0)).unwrap();
        let mut out = [0i8; 2];
        params.run(&[-10, 10], &mut out).unwrap();
        assert_eq!(out, [10, 10]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(LeakyReluS8::decode(&mut Words::new(&words)), Ok(params));
        words[5] = i32::MIN as u32;
        assert!(LeakyReluS8::decode(&mut Words::new(&words)).is_err());
        assert!(LeakyReluS8::prepare(1, 0.2, (0.0, 0), (0.5, 0)).is_err());
    }
}
