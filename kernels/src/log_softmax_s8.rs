//! LOG_SOFTMAX on int8 along the last dimension, as TFLM's `log_softmax.cc` runs it
//! (`reference_ops::LogSoftmax` → `LogSoftmaxQuantized<int8_t>`, gemmlowp fixed point): per
//! row, each `x - max` scaled by `input_scale * 2^26` into Q5.26, their exponentials summed
//! in Q12.19, the log of the sum by gemmlowp's `log_x_for_x_greater_than_or_equal_to_1`
//! (Q5.26), and each output `(scaled_diff - log_sum) / 2^22 + 127` saturated. The output is
//! always scale 16/256, zero point 127 (TFLM's Prepare requires it); beta is 1.
//!
//! Bindings of `log_softmax_s8`: 0 input, 1 output (`outer * depth` `i8` each). Each row is
//! read whole before its outputs are written, so `output` may alias `input` here (the WGSL
//! version computes outputs independently and needs them apart).

use hal_core::kernel::KernelError;

use crate::binding_len::{require, rows_len, slice_bytes};
use crate::fixed_point::{
    exp_on_negative_values, log_x_for_x_greater_than_or_equal_to_1, FixedPoint,
};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier, rounding_divide_by_pot};
use crate::softmax::{calculate_input_radius, preprocess_softmax_scaling};

/// Integer bits of the scaled differences and of the log (TFLM's `kInputIntegerBits`).
const INPUT_INTEGER_BITS: i32 = 5;
/// Integer bits of the sum of exponentials (TFLM's `kAccumulationIntegerBits`).
const ACCUMULATION_INTEGER_BITS: i32 = 12;
/// Integer bits of the output (TFLM's `kOutputIntegerBits`): 16/256 is `2^4 / 2^8`.
const OUTPUT_INTEGER_BITS: i32 = 4;
/// The output quantization TFLM requires.
pub const OUTPUT_SCALE: f32 = 16.0 / 256.0;
/// The output zero point TFLM requires.
pub const OUTPUT_ZERO_POINT: i32 = 127;

/// `log_softmax_s8`. Words: `outer`, `depth`, `input_multiplier`, `input_left_shift`,
/// `reverse_scaling_divisor`, `reverse_scaling_shift`, `diff_min`. `decode` refuses a zero
/// or overflowing shape, a negative multiplier or divisor, `input_left_shift` outside
/// `0..=31`, `reverse_scaling_shift` outside `-31..=0` and a positive `diff_min`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSoftmaxS8 {
    /// Rows: the product of every dimension but the last.
    pub outer: usize,
    /// Elements a row: the last dimension.
    pub depth: usize,
    /// `input_scale * 2^26` as a Q31 multiplier (TFLM's `input_multiplier`).
    pub input_multiplier: i32,
    /// Its left shift (TFLM's `input_left_shift`).
    pub input_left_shift: i32,
    /// The inverse scaling as a Q31 multiplier (TFLM's `reverse_scaling_divisor`).
    pub reverse_scaling_divisor: i32,
    /// Its shift, at most 0 (minus TFLM's `reverse_scaling_right_shift`).
    pub reverse_scaling_shift: i32,
    /// The smallest `x - max(row)` whose exponential is summed (TFLM's `diff_min`).
    pub diff_min: i32,
}

impl LogSoftmaxS8 {
    const WHAT: &'static str =
        "log_softmax_s8: zero or overflowing shape, or multiplier/shift/diff_min out of range";
    const PREPARE: &'static str =
        "log_softmax_s8: output must be scale 16/256 zero point 127, input scale * 2^26 above 1";

    fn validate(self) -> Result<Self, KernelError> {
        rows_len(self.outer, self.depth, 1, Self::WHAT)?;
        if self.input_multiplier < 0
            || self.reverse_scaling_divisor < 0
            || !(0..=31).contains(&self.input_left_shift)
            || !(-31..=0).contains(&self.reverse_scaling_shift)
            || !(i32::MIN + 1..=0).contains(&self.diff_min)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// The parameters TFLM's Prepare computes for `outer` rows of `depth` from the input's
    /// scale (`PreprocessLogSoftmaxScalingExp` with beta 1 and 5 integer bits,
    /// `CalculateInputRadius`). Refuses, as TFLM does, an output quantization other than
    /// exactly scale 16/256 and zero point 127, and scales where TFLM's multiplier checks
    /// abort (`input_scale * 2^26` not above 1, an inverse not below 1).
    pub fn prepare(
        outer: usize,
        depth: usize,
        input_scale: f32,
        output_scale: f32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        let refuse = KernelError::Shape(Self::PREPARE);
        if output_scale != OUTPUT_SCALE || output_zero_point != OUTPUT_ZERO_POINT {
            return Err(refuse);
        }
        let (input_multiplier, input_left_shift) =
            preprocess_softmax_scaling(1.0, f64::from(input_scale), INPUT_INTEGER_BITS)
                .ok_or(refuse)?;
        // (1 << (31 - left_shift)) / double(multiplier): the shift is at least 1 here.
        let reverse = (1i64 << (31 - input_left_shift)) as f64 / f64::from(input_multiplier);
        if !(reverse > 0.0 && reverse < 1.0) {
            return Err(refuse);
        }
        let (reverse_scaling_divisor, reverse_scaling_shift) = quantize_multiplier(reverse);
        if reverse_scaling_shift > 0 {
            return Err(refuse);
        }
        let diff_min = -calculate_input_radius(INPUT_INTEGER_BITS, input_left_shift, 31);
        Self {
            outer,
            depth,
            input_multiplier,
            input_left_shift,
            reverse_scaling_divisor,
            reverse_scaling_shift,
            diff_min,
        }
        .validate()
    }

    /// Bindings 0 and 1 hold `outer * depth` bytes.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let count = self.outer * self.depth;
        require(binding_lens, 0, count)?;
        require(binding_lens, 1, count)
    }

    /// `input_diff * input_scale * 2^26`, Q5.26.
    fn scaled_diff(&self, input_diff: i32) -> i32 {
        multiply_by_quantized_multiplier(input_diff, self.input_multiplier, self.input_left_shift)
    }

    /// Runs the kernel over the first `outer * depth` elements of each slice.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.check(&[slice_bytes(input), slice_bytes(output)])?;
        for (row_in, row_out) in input
            .chunks_exact(self.depth)
            .zip(output.chunks_exact_mut(self.depth))
            .take(self.outer)
        {
            let max_in_row = i32::from(row_in.iter().fold(i8::MIN, |m, &x| m.max(x)));
            // gemmlowp's `+` wraps; below 4096 elements a row it cannot.
            let mut sum_of_exps = 0i32;
            for &x in row_in {
                let input_diff = i32::from(x) - max_in_row;
                if input_diff >= self.diff_min {
                    let exp = exp_on_negative_values(FixedPoint::<INPUT_INTEGER_BITS>::from_raw(
                        self.scaled_diff(input_diff),
                    ));
                    let term = exp.rescale::<ACCUMULATION_INTEGER_BITS>().raw();
                    sum_of_exps = sum_of_exps.wrapping_add(term);
                }
            }
            let log_sum_of_exps = log_x_for_x_greater_than_or_equal_to_1(sum_of_exps);
            let shifted_log_sum_of_exps = log_sum_of_exps.wrapping_add(i32::MIN);
            let adjusted_diff_min = (self.diff_min - 1).max(multiply_by_quantized_multiplier(
                shifted_log_sum_of_exps,
                self.reverse_scaling_divisor,
                self.reverse_scaling_shift,
            ));
            for (&x, y) in row_in.iter().zip(row_out.iter_mut()) {
                let input_diff = i32::from(x) - max_in_row;
                *y = if input_diff > adjusted_diff_min {
                    let output = rounding_divide_by_pot(
                        self.scaled_diff(input_diff).wrapping_sub(log_sum_of_exps),
                        31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS,
                    ) + i32::from(i8::MAX);
                    output.clamp(-128, 127) as i8
                } else {
                    i8::MIN
                };
            }
        }
        Ok(())
    }
}

impl KernelParams for LogSoftmaxS8 {
    const KERNEL: &'static str = "log_softmax_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.outer as u32,
            self.depth as u32,
            self.input_multiplier as u32,
            self.input_left_shift as u32,
            self.reverse_scaling_divisor as u32,
            self.reverse_scaling_shift as u32,
            self.diff_min as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            outer: words.usize()?,
            depth: words.usize()?,
            input_multiplier: words.i32()?,
            input_left_shift: words.i32()?,
            reverse_scaling_divisor: words.i32()?,
            reverse_scaling_shift: words.i32()?,
            diff_min: words.i32()?,
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
    fn rows_give_log_probabilities() {
        let p = LogSoftmaxS8::prepare(2, 4, 0.1, OUTPUT_SCALE, OUTPUT_ZERO_POINT).unwrap();
        let mut out = [0i8; 8];
        p.run(&[5, 5, 5, 5, 100, 0, -100, 100], &mut out).unwrap();
        // ln(1/4) = -1.386 → -22.2 steps of 1/16 → 127 - 22 = 105.
        assert_eq!(&out[..4], &[105; 4]);
        // Two of 10.0, a 0.0 and a -10.0: ln(1/2) → -11.09 → 116; -10.69 → -171.1 → -44;
        // the last saturates.
        assert_eq!(&out[4..], &[116, -44, -128, 116]);
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(LogSoftmaxS8::decode(&mut Words::new(&words)), Ok(p));
        assert!(LogSoftmaxS8::prepare(2, 4, 0.1, 1.0 / 16.0, 0).is_err());
        assert!(LogSoftmaxS8::prepare(2, 4, 1e-9, OUTPUT_SCALE, OUTPUT_ZERO_POINT).is_err());
        assert!(LogSoftmaxS8::prepare(0, 4, 0.1, OUTPUT_SCALE, OUTPUT_ZERO_POINT).is_err());
    }
}
