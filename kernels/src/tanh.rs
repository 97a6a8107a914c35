//! TANH, as TFLM's `tanh.cc` runs it: `tanh_s8` through `reference_integer_ops::Tanh`
//! (gemmlowp's fixed-point `tanh` on a Q4.27 input, the input scaling as for LOGISTIC),
//! `tanh_f32` through `reference_ops::Tanh<float>` (`tanhf`).
//!
//! Bindings, both kernels: 0 `input` (`len` elements: `i8` / `f32`), 1 `output` (`len`
//! elements, same type). Element-wise: `output` may alias `input`.

use hal_core::kernel::KernelError;

use crate::act_s8::{ActFunctionS8, ActS8, INPUT_INTEGER_BITS};
use crate::fixed_point::{tanh, FixedPoint};
use crate::float_math::tanhf;
use crate::quant::rounding_divide_by_pot;
use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// `tanh_s8`: int8 tanh. The output is in units of 1/128 with zero point 0: TFLM checks
/// neither the output's scale nor its zero point, and writes those units regardless. Words
/// and refusals: [`ActS8`]'s, as for [`LogisticS8`](crate::logistic::LogisticS8).
pub type TanhS8 = ActS8<Tanh>;

/// `tanh_f32`: float tanh, `tanhf` element by element. Words and refusals: [`UnaryF32`]'s.
pub type TanhF32 = UnaryF32<Tanh>;

/// The hyperbolic tangent, as the [`ActFunctionS8`] and [`UnaryFunctionF32`] of TANH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tanh;

impl ActFunctionS8 for Tanh {
    const KERNEL: &'static str = "tanh_s8";
    const WHAT: &'static str = "tanh_s8: zero length, zero point outside int8, input scale not in [2^-28, inf), or radius/multiplier/shift out of range";

    #[inline(always)]
    fn apply(input_in_q4: i32) -> i8 {
        let output_in_q0 = tanh::<INPUT_INTEGER_BITS, { INPUT_INTEGER_BITS + 1 }>(
            FixedPoint::from_raw(input_in_q4),
        )
        .raw();
        // Q0.31 to Q24.7.
        rounding_divide_by_pot(output_in_q0, 31 - 7).clamp(-128, 127) as i8
    }
}

impl UnaryFunctionF32 for Tanh {
    const KERNEL: &'static str = "tanh_f32";
    const WHAT: &'static str = "tanh_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        tanhf(x)
    }
}

impl ActS8<Tanh> {
    /// The parameters TFLM's TANH Prepare computes for `len` elements from the input's
    /// quantization (see [`act_input_scaling`](crate::act_s8::act_input_scaling) for
    /// what it refuses). The output quantization plays no part.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
    ) -> Result<Self, KernelError> {
        Self::from_input_quantization(len, input_scale, input_zero_point)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::params::{KernelParams, Words};

    #[test]
    fn known_values() {
        let p = TanhS8::prepare(7, 0.1, 0).unwrap();
        let mut out = [0i8; 7];
        p.run(&[0, 10, -10, 127, -128, 5, -50], &mut out).unwrap();
        // tanh(0) = 0; tanh(1) * 128 = 97.48 → 97; tanh(-1) → -97; beyond radius 120:
        // ±saturation; tanh(0.5) * 128 = 59.18 → 59; tanh(-5) * 128 = -127.98 → -128.
        assert_eq!(out, [0, 97, -97, 127, -128, 59, -128]);
    }

    #[test]
    fn matches_float_within_one_step_odd_and_monotonic() {
        for (scale, zp) in [(0.1f32, 0), (0.03, -5), (0.5, 12), (0.008, 0)] {
            let p = TanhS8::prepare(256, scale, zp).unwrap();
            let input: Vec<i8> = (-128..=127).collect();
            let mut out = [0i8; 256];
            p.run(&input, &mut out).unwrap();
            for w in out.windows(2) {
                assert!(w[0] <= w[1]);
            }
            for (&x, &y) in input.iter().zip(&out) {
                let real = f64::from(scale) * (f64::from(x) - f64::from(zp));
                let want = (128.0 * libm::tanh(real)).clamp(-128.0, 127.0);
                assert!(
                    (f64::from(y) - want).abs() <= 1.0,
                    "scale {scale} x {x}: {y} vs {want}"
                );
            }
            if zp == 0 {
                // Odd below the clamp: tanh(-x) = -tanh(x).
                for x in 1..=127usize {
                    if out[128 + x] < 127 {
                        assert_eq!(out[128 - x], -out[128 + x]);
                    }
                }
            }
        }
    }

    #[test]
    fn float_tanh() {
        let p = TanhF32::prepare(4).unwrap();
        let mut out = [0f32; 4];
        p.run(&[0.0, 0.5, -2.0, 30.0], &mut out).unwrap();
        assert_eq!(out[0], 0.0);
        assert!((f64::from(out[1]) - libm::tanh(0.5)).abs() < 1e-7);
        assert!((f64::from(out[2]) - libm::tanh(-2.0)).abs() < 1e-7);
        assert_eq!(out[3], 1.0);
    }

    #[test]
    fn round_trip_decode_and_check() {
        let p = TanhS8::prepare(10, 0.05, 4).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(TanhS8::decode(&mut Words::new(&words)), Ok(p));
        let mut bad = words.clone();
        bad[0] = 0;
        assert!(TanhS8::decode(&mut Words::new(&bad)).is_err());
        assert_eq!(
            p.check(&[9, 10]),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 9,
                needed: 10
            })
        );
        assert_eq!(
            p.check(&[10]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        let f = TanhF32::prepare(2).unwrap();
        let mut words = Vec::new();
        f.encode(&mut words);
        assert_eq!(TanhF32::decode(&mut Words::new(&words)), Ok(f));
        assert!(f.run(&[0.0; 2], &mut [0.0; 1]).is_err());
        assert_eq!(TanhS8::KERNEL, "tanh_s8");
        assert_eq!(TanhF32::KERNEL, "tanh_f32");
    }
}
