//! The 256-entry tables of TFLM's int8 ops that run as [`lut_s8`](crate::lut_s8) (ELU,
//! ABS, RSQRT): each op is a pure function of one int8 value, so the importer evaluates
//! TFLM's arithmetic once per value and the kernel only looks up. Entry `b` is the output
//! for the input whose byte is `b` (`x as u8`).
//!
//! - ELU (`elu.cc`'s `PopulateLookupTable`): each value dequantized, `x < 0 ? exp(x) - 1 :
//!   x`, requantized, all in `f32` as TFLM's Prepare computes it. `exp` is the C library's
//!   `expf`, which this `no_std` crate cannot call and whose results `libm`'s do not always
//!   match, so the caller passes it in.
//! - ABS: `|x - input_zero_point|`, requantized with `QuantizeMultiplier(input_scale /
//!   output_scale)` (the division in `f32`) unless the two scales are equal, plus the
//!   output zero point, saturated.
//! - RSQRT: `x - input_zero_point` (0 gives 127, TFLM's "maximum"), its inverse square root
//!   by `GetInvSqrtQuantizedMultiplierExp`, applied to 1 with 20 extra fraction bits, then
//!   `QuantizeMultiplier(1 / (sqrtf(input_scale) * output_scale))` with the 20 bits taken
//!   back, plus the output zero point, saturated. TFLM fails the Invoke on any input below
//!   the input zero point ("Rsqrt is only defined for positive values"); a lookup table
//!   cannot fail, so those entries hold what the arithmetic gives for them (the inverse
//!   square root treats every value up to 1 as 1).

use crate::l2_normalization::inv_sqrt_quantized_multiplier_exp;
use crate::lut_s8::TABLE_LEN;
use crate::quant::{
    quantize_multiplier, rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
};

/// An int8 tensor's quantization: `(scale, zero_point)`.
pub type Quantization = (f32, i32);

/// RSQRT's extra fraction bits (TFLM's `kShift`).
const RSQRT_SHIFT: i32 = 20;

/// `MultiplyByQuantizedMultiplier` (double rounding) with the shifts bounded to what `i32`
/// arithmetic can do (a left shift of at most 31, a right shift of at most 31): TFLM's
/// shifts stay inside for any sensible scales.
fn multiply(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = shift.clamp(0, 31);
    let right = (-shift).clamp(0, 31);
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x.wrapping_mul(1i32 << left), multiplier),
        right,
    )
}

/// A table filled by `f` over every int8 input value, each output saturated to int8 (`f`
/// wraps where `i32` overflows, as TFLM's arithmetic does on the targets it runs on, so no
/// model's quantization can make it panic).
fn table(f: impl Fn(i32) -> i32) -> [u8; TABLE_LEN] {
    let mut out = [0u8; TABLE_LEN];
    for value in -128i32..=127 {
        out[usize::from(value as i8 as u8)] = f(value).clamp(-128, 127) as i8 as u8;
    }
    out
}

/// TFLM's int8 ELU over every input value, `expf` the C library's `expf` (`f32::exp` with
/// `std`).
pub fn elu_table(
    (input_scale, input_zero_point): Quantization,
    (output_scale, output_zero_point): Quantization,
    expf: impl Fn(f32) -> f32,
) -> [u8; TABLE_LEN] {
    let inverse_scale = 1.0 / output_scale;
    table(|x| {
        let dequantized = input_scale * x.wrapping_sub(input_zero_point) as f32;
        let transformed = if dequantized < 0.0 {
            expf(dequantized) - 1.0
        } else {
            dequantized
        };
        let rescaled = libm::roundf(transformed * inverse_scale);
        // Saturating where TFLM's conversion is undefined.
        (rescaled + output_zero_point as f32) as i32
    })
}

/// TFLM's int8 ABS over every input value.
pub fn abs_table(
    (input_scale, input_zero_point): Quantization,
    (output_scale, output_zero_point): Quantization,
) -> [u8; TABLE_LEN] {
    let needs_rescale = input_scale != output_scale;
    let (multiplier, shift) = quantize_multiplier(f64::from(input_scale / output_scale));
    table(|x| {
        let value = x.wrapping_sub(input_zero_point).wrapping_abs();
        if needs_rescale {
            multiply(value, multiplier, shift).wrapping_add(output_zero_point)
        } else {
            value.wrapping_add(output_zero_point)
        }
    })
}

/// TFLM's int8 RSQRT over every input value (see the module's note on values below the
/// input zero point).
pub fn rsqrt_table(
    (input_scale, input_zero_point): Quantization,
    (output_scale, output_zero_point): Quantization,
) -> [u8; TABLE_LEN] {
    // 1. / static_cast<double>(std::sqrt(input_scale) * output_scale): the product in f32.
    let real = 1.0 / f64::from(libm::sqrtf(input_scale) * output_scale);
    let (multiplier, shift) = quantize_multiplier(real);
    table(|x| {
        let value = x.wrapping_sub(input_zero_point);
        if value == 0 {
            return i32::from(i8::MAX);
        }
        let (inv_sqrt, inv_sqrt_shift) = inv_sqrt_quantized_multiplier_exp(value);
        let data = multiply(1, inv_sqrt, inv_sqrt_shift + RSQRT_SHIFT);
        multiply(data, multiplier, shift - RSQRT_SHIFT).wrapping_add(output_zero_point)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(table: &[u8; TABLE_LEN], x: i8) -> i8 {
        table[usize::from(x as u8)] as i8
    }

    #[test]
    fn abs_reflects_about_the_zero_point() {
        let same = abs_table((0.1, 3), (0.1, -5));
        assert_eq!(at(&same, 3), -5);
        assert_eq!(at(&same, 13), 5);
        assert_eq!(at(&same, -7), 5);
        assert_eq!(at(&same, -128), 126);
        // 131 + 5 saturates.
        assert_eq!(abs_table((0.1, 3), (0.1, 5))[128], 127);
        // Output scale twice the input's: half the steps, rounded half away from zero.
        let halved = abs_table((0.1, 0), (0.2, 0));
        assert_eq!(at(&halved, 5), 3);
        assert_eq!(at(&halved, -4), 2);
        assert_eq!(at(&halved, -128), 64);
    }

    #[test]
    fn rsqrt_follows_the_real_function() {
        // Input scale 1/16 (sqrt 1/4), output scale 1/64: the real multiplier is 256.
        let table = rsqrt_table((1.0 / 16.0, -128), (1.0 / 64.0, -128));
        assert_eq!(at(&table, -128), 127);
        for x in -127i32..=127 {
            let real = 1.0 / libm::sqrt(f64::from(x + 128) / 16.0);
            let want = (real * 64.0).round() - 128.0;
            let got = f64::from(at(&table, x as i8));
            assert!((got - want.min(127.0)).abs() <= 1.0, "{x}: {got} vs {want}");
        }
    }
}
