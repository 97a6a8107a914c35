//! LOGISTIC (sigmoid), as TFLM's `logistic.cc` runs it: `logistic_s8` through
//! `reference_integer_ops::Logistic` (gemmlowp's fixed-point `logistic` on a Q4.27 input,
//! the multiplier and radius from `CalculateArithmeticOpDataLogistic`), `logistic_f32`
//! through `reference_ops::Logistic<float>`.
//!
//! Bindings, both kernels: 0 `input` (`len` elements: `i8` / `f32`), 1 `output` (`len`
//! elements, same type). Element-wise: `output` may alias `input`.

use hal_core::kernel::KernelError;

pub use crate::act_s8::{act_input_scaling, INPUT_INTEGER_BITS};
use crate::act_s8::{ActFunctionS8, ActS8};
use crate::fixed_point::{logistic, FixedPoint};
use crate::float_math::expf;
use crate::quant::rounding_divide_by_pot;
use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// `logistic_s8`: int8 sigmoid. The output is in units of 1/256 with zero point -128 (TFLM
/// requires the output zero point and assumes that scale). Words and refusals: [`ActS8`]'s.
pub type LogisticS8 = ActS8<Logistic>;

/// The sigmoid, as the [`ActFunctionS8`] and [`UnaryFunctionF32`] of LOGISTIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logistic;

impl ActFunctionS8 for Logistic {
    const KERNEL: &'static str = "logistic_s8";
    const WHAT: &'static str = "logistic_s8: zero length, zero point outside int8, input scale not in [2^-28, inf), output zero point not -128, or radius/multiplier/shift out of range";

    #[inline(always)]
    fn apply(input_in_q4: i32) -> i8 {
        let output_in_q0 = logistic(FixedPoint::<INPUT_INTEGER_BITS>::from_raw(input_in_q4)).raw();
        // Q0.31 to Q23.8, then the zero point.
        let v = rounding_divide_by_pot(output_in_q0, 31 - 8) - 128;
        v.clamp(-128, 127) as i8
    }
}

impl ActS8<Logistic> {
    /// The parameters TFLM's `CalculateArithmeticOpDataLogistic` computes for `len`
    /// elements from the input's quantization; refuses an output zero point other than -128
    /// (as TFLM does; it does not check the output scale, and the kernel writes units of
    /// 1/256 whatever it is) and what [`act_input_scaling`] refuses.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        if output_zero_point != -128 {
            return Err(KernelError::Shape(<Logistic as ActFunctionS8>::WHAT));
        }
        Self::from_input_quantization(len, input_scale, input_zero_point)
    }
}

/// Above this TFLM's float logistic returns exactly 1.
const CUTOFF_UPPER: f32 = 16.619_047;
/// Below this it returns `expf(x)`.
const CUTOFF_LOWER: f32 = -9.0;

/// `logistic_f32`: float sigmoid as `reference_ops::Logistic<float>`: 1 above
/// 16.619047164916992, `expf(x)` below -9, else `1 / (1 + expf(-x))`. Words and refusals:
/// [`UnaryF32`]'s.
pub type LogisticF32 = UnaryF32<Logistic>;

impl UnaryFunctionF32 for Logistic {
    const KERNEL: &'static str = "logistic_f32";
    const WHAT: &'static str = "logistic_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        logistic_f32(x)
    }
}

/// TFLM's float logistic of one value.
#[inline]
pub fn logistic_f32(x: f32) -> f32 {
    if x > CUTOFF_UPPER {
        1.0
    } else if x < CUTOFF_LOWER {
        expf(x)
    } else {
        1.0 / (1.0 + expf(-x))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::params::{KernelParams, Words};

    #[test]
    fn prepare_computes_tflm_scaling() {
        // scale 0.1: 0.1f * 2^27 = 13421773.0 * ... = 0.8 * 2^24: shift 24.
        let (m, s, r) = act_input_scaling(0.1).unwrap();
        let (q, e) = libm::frexp(f64::from(0.1f32) * 134_217_728.0);
        assert_eq!((m, s), (libm::round(q * 2147483648.0) as i32, e));
        assert_eq!(s, 24);
        // floor(15 * 2^27 / 2^24) = 120.
        assert_eq!(r, 120);
        // scale 1/16: exactly 2^23, q = 0.5 → multiplier 2^30, shift 24.
        assert_eq!(act_input_scaling(0.0625), Some((1 << 30, 24, 120)));
        // Scale 32: shift 33 → stored as 31, radius 0.
        assert_eq!(act_input_scaling(32.0).map(|t| (t.1, t.2)), Some((31, 0)));
        assert_eq!(act_input_scaling(0.0), None);
        assert_eq!(act_input_scaling(1e-10), None);
        assert_eq!(act_input_scaling(f32::NAN), None);
        assert!(LogisticS8::prepare(4, 0.1, 0, 0).is_err());
        assert!(LogisticS8::prepare(4, 0.1, 200, -128).is_err());
        assert!(LogisticS8::prepare(0, 0.1, 0, -128).is_err());
    }

    #[test]
    fn known_values() {
        let p = LogisticS8::prepare(7, 0.1, 0, -128).unwrap();
        let mut out = [0i8; 7];
        p.run(&[0, 10, -10, 127, -128, 50, -50], &mut out).unwrap();
        // logistic(0) = 0.5 → 128 - 128 = 0; logistic(1) * 256 = 187.16 → 59;
        // logistic(-1) * 256 = 68.84 → -59; logistic(12.7) saturates at 127 (radius
        // 120); logistic(-12.8) at -128; logistic(5) * 256 = 254.29 → 126;
        // logistic(-5) * 256 = 1.71 → -126.
        assert_eq!(out, [0, 59, -59, 127, -128, 126, -126]);
        // The zero point shifts the input.
        let p = LogisticS8::prepare(1, 0.1, -10, -128).unwrap();
        let mut out = [0i8; 1];
        p.run(&[-10], &mut out).unwrap();
        assert_eq!(out, [0]);
    }

    #[test]
    fn matches_float_within_one_step_and_is_monotonic() {
        for (scale, zp) in [(0.1f32, 0), (0.05, -20), (0.25, 7), (0.02, 100), (3.0, 0)] {
            let p = LogisticS8::prepare(256, scale, zp, -128).unwrap();
            let input: Vec<i8> = (-128..=127).collect();
            let mut out = [0i8; 256];
            p.run(&input, &mut out).unwrap();
            for w in out.windows(2) {
                assert!(w[0] <= w[1]);
            }
            for (&x, &y) in input.iter().zip(&out) {
                let real = f64::from(scale) * (f64::from(x) - f64::from(zp));
                let want = (256.0 / (1.0 + libm::exp(-real)) - 128.0).clamp(-128.0, 127.0);
                assert!(
                    (f64::from(y) - want).abs() <= 1.0,
                    "scale {scale} x {x}: {y} vs {want}"
                );
            }
        }
    }

    #[test]
    fn float_logistic() {
        let p = LogisticF32::prepare(6).unwrap();
        let mut out = [0f32; 6];
        p.run(&[0.0, 1.0, -1.0, 20.0, -10.0, 16.619_047], &mut out)
            .unwrap();
        assert_eq!(out[0], 0.5);
        assert!((f64::from(out[1]) - 1.0 / (1.0 + libm::exp(-1.0))).abs() < 1e-7);
        assert!((f64::from(out[2]) - 1.0 / (1.0 + libm::exp(1.0))).abs() < 1e-7);
        assert_eq!(out[3], 1.0);
        // Below -9: exp(x) itself.
        assert_eq!(out[4], expf(-10.0));
        // At the cutoff (not above it) the formula applies.
        assert_eq!(out[5], 1.0 / (1.0 + expf(-16.619_047)));
        // TFLM spells it 16.619047164916992188f: the same f32.
        assert_eq!(CUTOFF_UPPER.to_bits(), 0x4184_f3cf);
    }

    #[test]
    fn round_trip_decode_and_check() {
        let p = LogisticS8::prepare(10, 0.1, -3, -128).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 5);
        assert_eq!(LogisticS8::decode(&mut Words::new(&words)), Ok(p));
        let mut bad = words.clone();
        bad[1] = 300;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words.clone();
        bad[4] = 32;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words.clone();
        bad[2] = (-1i32) as u32;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        assert!(LogisticS8::decode(&mut Words::new(&words[..4])).is_err());
        assert_eq!(p.check(&[10, 10]), Ok(()));
        assert_eq!(
            p.check(&[10, 9]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 9,
                needed: 10
            })
        );
        assert!(p.run(&[0; 9], &mut [0; 10]).is_err());
        let f = LogisticF32::prepare(3).unwrap();
        let mut words = Vec::new();
        f.encode(&mut words);
        assert_eq!(LogisticF32::decode(&mut Words::new(&words)), Ok(f));
        assert!(LogisticF32::decode(&mut Words::new(&[0])).is_err());
        assert_eq!(
            f.check(&[12, 11]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 11,
                needed: 12
            })
        );
        assert_eq!(LogisticS8::KERNEL, "logistic_s8");
        assert_eq!(LogisticF32::KERNEL, "logistic_f32");
    }
}
