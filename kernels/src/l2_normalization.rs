//! L2_NORMALIZATION over the last dimension, as TFLM's `l2norm.cc` runs it. Float:
//! `x / max(sqrt(Σ x²), 1e-6)`, the sum in `f32` in order. int8
//! (`reference_integer_ops::L2Normalization`): the squares of `x - zero_point` summed in
//! int32, their inverse square root as a multiplier and shift
//! ([`inv_sqrt_quantized_multiplier_exp`], gemmlowp's Newton-Raphson iteration), each
//! value scaled by it into Q0.7 (the output's scale 1/128 and zero point 0, whatever the
//! output tensor says: TFLM's kernel reads neither) and saturated to int8.
//!
//! Bindings of `l2_normalization_s8` and `l2_normalization_f32`: 0 input, 1 output (`i8` or
//! `f32`), `outer × depth` elements each.

use crate::fixed_point::FixedPoint;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::multiply_by_quantized_multiplier;
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// TFLM's float epsilon: the smallest norm divided by.
pub const EPSILON: f32 = 1e-6;

/// `1 / sqrt(input)` as a Q31 multiplier and a left shift (TFLite's
/// `GetInvSqrtQuantizedMultiplierExp` with `reverse_shift` -1): 0 and 1 give `i32::MAX` and
/// 0; otherwise the input is normalized to `[2^27, 2^29)` by pairs of bits, five
/// Newton-Raphson steps run from 1 in Q3.28, and the result is scaled by `sqrt(2) / 2`.
pub fn inv_sqrt_quantized_multiplier_exp(input: i32) -> (i32, i32) {
    if input <= 1 {
        return (i32::MAX, 0);
    }
    let mut input = input;
    let mut shift = 11;
    while input >= 1 << 29 {
        input /= 4;
        shift += 1;
    }
    let max_left_shift_bits = (input as u32).leading_zeros() - 1;
    let left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
    shift -= left_shift_bit_pairs as i32;
    input <<= 2 * left_shift_bit_pairs;
    let fixed_input = FixedPoint::<3>::from_raw(input >> 1);
    let half_input = fixed_input.saturating_rounding_multiply_by_pot::<-1>();
    let half_three = FixedPoint::<3>::from_raw((1 << 28) + (1 << 27));
    let mut x = FixedPoint::<3>::one();
    for _ in 0..5 {
        let x2: FixedPoint<6> = x.times(x);
        let x3: FixedPoint<9> = x2.times(x);
        let x3: FixedPoint<3> = x3.rescale();
        let first: FixedPoint<6> = half_three.times(x);
        let second: FixedPoint<6> = half_input.times(x3);
        x = first.sub(second).rescale();
    }
    let half_sqrt_2 = FixedPoint::<0>::from_raw(1_518_500_250);
    let x: FixedPoint<3> = x.times(half_sqrt_2);
    let mut multiplier = x.raw();
    if shift < 0 {
        multiplier <<= -shift;
        shift = 0;
    }
    (multiplier, -shift)
}

/// The rows normalized: `outer` rows of `depth` elements. Words: `outer`, `depth`, then (int8)
/// `input_zero_point`. `decode` refuses zero or overflowing sizes and zero points outside
/// int8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Rows {
    /// Rows: the product of every dimension but the last.
    pub outer: usize,
    /// The last dimension.
    pub depth: usize,
}

impl L2Rows {
    fn validate(self) -> Result<Self, KernelError> {
        if self.outer == 0 || self.depth == 0 || shape::product(&[self.outer, self.depth]).is_err()
        {
            return Err(KernelError::Shape(
                "l2_normalization: a zero or overflowing size",
            ));
        }
        Ok(self)
    }

    fn check(&self, binding_lens: &[usize], elem: usize) -> Result<(), KernelError> {
        need(binding_lens, 0, self.outer * self.depth, elem)?;
        need(binding_lens, 1, self.outer * self.depth, elem)
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            outer: words.usize()?,
            depth: words.usize()?,
        }
        .validate()
    }
}

/// `l2_normalization_f32`. Words: [`L2Rows`]'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2NormalizationF32 {
    /// The rows.
    pub rows: L2Rows,
}

impl L2NormalizationF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.rows.check(binding_lens, 4)
    }

    /// Runs the kernel.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[input.len() * 4, output.len() * 4])?;
        let depth = self.rows.depth;
        for (row, out) in input
            .chunks_exact(depth)
            .zip(output.chunks_exact_mut(depth))
            .take(self.rows.outer)
        {
            let squares = row.iter().fold(0.0f32, |sum, &value| sum + value * value);
            let norm = libm::sqrtf(squares).max(EPSILON);
            for (o, &value) in out.iter_mut().zip(row) {
                *o = value / norm;
            }
        }
        Ok(())
    }
}

impl KernelParams for L2NormalizationF32 {
    const KERNEL: &'static str = "l2_normalization_f32";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.rows.outer as u32, self.rows.depth as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            rows: L2Rows::decode(words)?,
        })
    }
}

/// `l2_normalization_s8`. Words: [`L2Rows`]', `input_zero_point`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2NormalizationS8 {
    /// The rows.
    pub rows: L2Rows,
    /// The input's zero point.
    pub input_zero_point: i32,
}

/// The output's fractional bits (TFLM's `kOutputScale`): Q0.7.
const OUTPUT_BITS: i32 = 7;

impl L2NormalizationS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.rows.check(binding_lens, 1)
    }

    /// Runs the kernel.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        let depth = self.rows.depth;
        for (row, out) in input
            .chunks_exact(depth)
            .zip(output.chunks_exact_mut(depth))
            .take(self.rows.outer)
        {
            let centred = |value: i8| i32::from(value) - self.input_zero_point;
            let squares = row.iter().fold(0i32, |sum, &value| {
                sum.wrapping_add(centred(value) * centred(value))
            });
            let (multiplier, shift) = inv_sqrt_quantized_multiplier_exp(squares);
            for (o, &value) in out.iter_mut().zip(row) {
                let scaled = multiply_by_quantized_multiplier(
                    centred(value),
                    multiplier,
                    shift + OUTPUT_BITS,
                );
                *o = scaled.clamp(i32::from(i8::MIN), i32::from(i8::MAX)) as i8;
            }
        }
        Ok(())
    }
}

impl KernelParams for L2NormalizationS8 {
    const KERNEL: &'static str = "l2_normalization_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.rows.outer as u32,
            self.rows.depth as u32,
            self.input_zero_point as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let rows = L2Rows::decode(words)?;
        let input_zero_point = words.i32()?;
        if !(-128..=127).contains(&input_zero_point) {
            return Err(KernelError::Shape(
                "l2_normalization_s8: a zero point outside int8",
            ));
        }
        Ok(Self {
            rows,
            input_zero_point,
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn inverse_square_roots() {
        assert_eq!(inv_sqrt_quantized_multiplier_exp(0), (i32::MAX, 0));
        assert_eq!(inv_sqrt_quantized_multiplier_exp(1), (i32::MAX, 0));
        // 1 / sqrt(n) = multiplier / 2^31 * 2^shift, within a few parts in 10^6.
        for n in [2, 3, 4, 100, 16_129, 1 << 20, 2_000_000_000] {
            let (multiplier, shift) = inv_sqrt_quantized_multiplier_exp(n);
            let got = f64::from(multiplier) / 2f64.powi(31) * 2f64.powi(shift);
            let want = 1.0 / f64::from(n).sqrt();
            assert!((got - want).abs() / want < 1e-5, "{n}: {got} vs {want}");
        }
    }

    #[test]
    fn rows_come_out_unit_length() {
        let rows = L2Rows { outer: 2, depth: 2 };
        let mut out = [0.0f32; 4];
        L2NormalizationF32 { rows }
            .run(&[3.0, 4.0, 0.0, 0.0], &mut out)
            .unwrap();
        assert_eq!(out, [0.6, 0.8, 0.0, 0.0]);
        let params = L2NormalizationS8 {
            rows,
            input_zero_point: 1,
        };
        let mut out = [0i8; 4];
        params.run(&[4, 5, 1, 1], &mut out).unwrap();
        // (3, 4) / 5 in Q0.7: 77 and 102; a zero row stays zero.
        assert_eq!(out, [77, 102, 0, 0]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(
            L2NormalizationS8::decode(&mut Words::new(&words)).unwrap(),
            params
        );
        words[2] = 200;
        assert!(L2NormalizationS8::decode(&mut Words::new(&words)).is_err());
    }
}
