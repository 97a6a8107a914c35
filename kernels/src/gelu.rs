//! GELU as TensorFlow Lite's `activations.cc` and `reference/gelu.h` run it (TFLM has no
//! such op):
//!
//! - exact: `0.5 * x * erfc(x * -1/sqrt(2))` (erfc rather than `1 + erf`, which would
//!   cancel for large negative `x`);
//! - approximate: `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`.
//!
//! float32: a [`UnaryF32`] kernel for each (`gelu_f32`, `gelu_tanh_f32`); TFLite evaluates
//! them with Eigen's vectorized `erfc` and `tanh`, these with `libm`'s, both to a few ulp,
//! so the outputs agree to about 1e-6 relative (1e-7 absolute where `1 + tanh` cancels).
//! int8: a 256-entry table ([`gelu_table`]) looked up by `lut_s8`, built as TFLite's
//! `LUTPopulate` builds it in Prepare.
//!
//! Bindings, the float kernels: 0 `input` (`len` `f32`), 1 `output` (`len` `f32`).

use crate::lut_s8::TABLE_LEN;
use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// `-1/sqrt(2)` as TFLite's `static_cast<float>(-M_SQRT1_2)`.
pub const MINUS_SQRT1_2: f32 = -core::f64::consts::FRAC_1_SQRT_2 as f32;
/// `sqrt(2/pi)` as TFLite's `kSqrt2dPi` (`M_2_SQRTPI * M_SQRT1_2` in double, then `float`).
pub const SQRT_2_OVER_PI: f32 =
    (core::f64::consts::FRAC_2_SQRT_PI * core::f64::consts::FRAC_1_SQRT_2) as f32;
/// The cubic term's coefficient.
pub const CUBIC: f32 = 0.044715;

/// Exact GELU of `x` with the given `erfc`.
#[inline(always)]
pub fn gelu_with(x: f32, erfcf: impl Fn(f32) -> f32) -> f32 {
    0.5 * x * erfcf(x * MINUS_SQRT1_2)
}

/// Approximate (tanh) GELU of `x` with the given `tanh`.
#[inline(always)]
pub fn gelu_tanh_with(x: f32, tanhf: impl Fn(f32) -> f32) -> f32 {
    0.5 * x * (1.0 + tanhf(SQRT_2_OVER_PI * (x + CUBIC * x * x * x)))
}

/// Exact GELU, as the [`UnaryFunctionF32`] of `gelu_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gelu;

impl UnaryFunctionF32 for Gelu {
    const KERNEL: &'static str = "gelu_f32";
    const WHAT: &'static str = "gelu_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        gelu_with(x, libm::erfcf)
    }
}

/// `gelu_f32`: TFLite's float GELU (`approximate` false). Words and refusals:
/// [`UnaryF32`]'s.
pub type GeluF32 = UnaryF32<Gelu>;

/// Approximate GELU, as the [`UnaryFunctionF32`] of `gelu_tanh_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeluTanh;

impl UnaryFunctionF32 for GeluTanh {
    const KERNEL: &'static str = "gelu_tanh_f32";
    const WHAT: &'static str = "gelu_tanh_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        gelu_tanh_with(x, libm::tanhf)
    }
}

/// `gelu_tanh_f32`: TFLite's float GELU with `approximate`. Words and refusals:
/// [`UnaryF32`]'s.
pub type GeluTanhF32 = UnaryF32<GeluTanh>;

/// TFLite's int8 GELU table (`LUTPopulate<int8_t>` with `GeluTransform` or
/// `GeluTransformApproximate`): entry `b` (the input byte) is the value dequantized in
/// `f32`, transformed by `gelu` (one of [`gelu_with`], [`gelu_tanh_with`] with the C
/// library's `erfcf` or `tanhf`, which this `no_std` crate cannot call, so the caller
/// passes it in), times `1 / output_scale`, rounded half away from zero, plus the output
/// zero point, saturated to int8.
pub fn gelu_table(
    (input_scale, input_zero_point): (f32, i32),
    (output_scale, output_zero_point): (f32, i32),
    gelu: impl Fn(f32) -> f32,
) -> [u8; TABLE_LEN] {
    let inverse_scale = 1.0 / output_scale;
    let mut table = [0u8; TABLE_LEN];
    for (byte, entry) in table.iter_mut().enumerate() {
        let value = i32::from(byte as u8 as i8);
        let dequantized = input_scale * value.wrapping_sub(input_zero_point) as f32;
        let rescaled = libm::roundf(gelu(dequantized) * inverse_scale);
        // The float-to-int conversion saturates where C++'s is undefined.
        let quantized = (rescaled + output_zero_point as f32) as i32;
        *entry = quantized.clamp(-128, 127) as i8 as u8;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::KernelParams;

    #[test]
    fn known_values() {
        let gelu = |x: f32| Gelu::apply(x);
        let tanh = |x: f32| GeluTanh::apply(x);
        assert_eq!(gelu(0.0), 0.0);
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-6);
        assert!((gelu(-1.0) - -0.158_655_26).abs() < 1e-6);
        assert!((gelu(3.0) - 2.995_950_4).abs() < 1e-6);
        // Far below zero: erfc keeps the tiny negative value.
        assert!(gelu(-8.0) < 0.0 && gelu(-8.0) > -1e-14);
        assert!((tanh(1.0) - 0.841_192).abs() < 1e-6);
        assert!((tanh(-1.0) - -0.158_808).abs() < 1e-6);
        assert_eq!(GeluF32::KERNEL, "gelu_f32");
        assert_eq!(GeluTanhF32::KERNEL, "gelu_tanh_f32");
    }

    #[test]
    fn table_requantizes() {
        // Input scale 1/16 zero point 0, output scale 1/32 zero point -10.
        let table = gelu_table((1.0 / 16.0, 0), (1.0 / 32.0, -10), |x| {
            gelu_with(x, libm::erfcf)
        });
        assert_eq!(table[0] as i8, -10);
        // 16 is 1.0: gelu 0.8413 * 32 = 26.9 -> 27 - 10.
        assert_eq!(table[16] as i8, 17);
        // 127 is 7.9375: 254 - 10 saturates to 127.
        assert_eq!(table[127] as i8, 127);
        // -16 is -1.0: -0.1587 * 32 = -5.08 -> -5 - 10.
        assert_eq!(table[(-16i8) as u8 as usize] as i8, -15);
    }
}
