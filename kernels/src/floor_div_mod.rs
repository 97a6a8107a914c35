//! FLOOR_DIV and FLOOR_MOD, as TFLM's `floor_div.cc` and `floor_mod.cc` run them on float32
//! (the only type TFLM's micro kernels take), with TFLite's broadcasting (TFLM's
//! `BroadcastBinaryFunction4DSlow`: up to 4 dimensions where the shapes differ):
//!
//! - FLOOR_DIV: `std::floor(double(a) / double(b))`, the quotient in `f64`, its floor
//!   rounded back to `f32`. TFLM fails its invoke on a zero divisor; here a zero divisor
//!   gives IEEE's `a / 0` (an infinity, or NaN for `0 / 0`).
//! - FLOOR_MOD: `std::fmod(a, b)` (exact), then `trunc_mod + b` where `trunc_mod` is
//!   nonzero and its sign differs from `b`'s (`reference_ops::FloorMod`); a zero divisor
//!   gives NaN, as TFLM's (which does not check it).
//!
//! Neither has a fused activation: the lowering passes [`BroadcastF32`] an infinite range.
//!
//! Bindings, both kernels: 0 input 1, 1 input 2, 2 output (`f32` each), sized by the
//! [`BroadcastShape`](crate::broadcast::BroadcastShape).

use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};

/// `floor(a / b)` in `f64`, as the [`BinaryFunctionF32`] of FLOOR_DIV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorDiv;

impl BinaryFunctionF32 for FloorDiv {
    const KERNEL: &'static str = "floor_div_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        libm::floor(f64::from(a) / f64::from(b)) as f32
    }
}

/// `floor_div_f32`: `floor(a / b)` with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type FloorDivF32 = BroadcastF32<FloorDiv>;

/// `fmod(a, b)` moved to `b`'s sign, as the [`BinaryFunctionF32`] of FLOOR_MOD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorMod;

impl BinaryFunctionF32 for FloorMod {
    const KERNEL: &'static str = "floor_mod_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        let trunc_mod = libm::fmodf(a, b);
        if trunc_mod != 0.0 && ((b < 0.0) != (trunc_mod < 0.0)) {
            trunc_mod + b
        } else {
            trunc_mod
        }
    }
}

/// `floor_mod_f32`: `a - floor(a / b) * b` as TFLM computes it (`fmod`, then the sign
/// fix-up) with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type FloorModF32 = BroadcastF32<FloorMod>;

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::broadcast::BroadcastShape;
    use crate::params::{KernelParams, Words};

    #[test]
    fn floor_div_rounds_toward_minus_infinity() {
        let shape = BroadcastShape::new(&[2, 4], &[4]).unwrap();
        let a = [7.0, -7.0, 7.0, -7.0, 0.0, -0.0, 1.0, -1.0];
        let b = [2.0, 2.0, -2.0, -2.0];
        let mut out = [0.0f32; 8];
        FloorDivF32::new(shape, f32::NEG_INFINITY, f32::INFINITY)
            .run(&a, &b, &mut out)
            .unwrap();
        assert_eq!(out, [3.0, -4.0, -4.0, 3.0, 0.0, 0.0, -1.0, 0.0]);
        // Signed zeros, as `floor(±0.0)`.
        assert_eq!(out[4].to_bits(), 0);
        assert_eq!(out[5].to_bits(), (-0.0f32).to_bits());
        assert_eq!(out[7].to_bits(), 0);
        assert_eq!(FloorDiv::apply(0.0, -2.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(FloorDiv::apply(1.0, f32::INFINITY), 0.0);
        assert!(FloorDiv::apply(0.0, 0.0).is_nan());
        assert_eq!(FloorDiv::apply(1.0, 0.0), f32::INFINITY);
    }

    #[test]
    fn floor_div_is_exact_next_to_integers() {
        // 0.3 * 3 rounds to just above or below 0.9's float: the quotient by 0.3 is just
        // off 3, and its floor takes the side the exact quotient is on.
        let b = 0.3f32;
        let a = b * 3.0;
        let exact = f64::from(a) / f64::from(b);
        assert_eq!(FloorDiv::apply(a, b), libm::floor(exact) as f32);
        let below = f32::from_bits(a.to_bits() - 1);
        assert_eq!(FloorDiv::apply(below, b), 2.0);
        let above = f32::from_bits(a.to_bits() + 1);
        assert_eq!(FloorDiv::apply(above, b), 3.0);
        assert_eq!(FloorDiv::apply(-below, b), -3.0);
        assert_eq!(FloorDiv::apply(-above, b), -4.0);
    }

    #[test]
    fn floor_mod_takes_the_divisor_sign() {
        assert_eq!(FloorMod::apply(7.0, 3.0), 1.0);
        assert_eq!(FloorMod::apply(-7.0, 3.0), 2.0);
        assert_eq!(FloorMod::apply(7.0, -3.0), -2.0);
        assert_eq!(FloorMod::apply(-7.0, -3.0), -1.0);
        assert_eq!(FloorMod::apply(5.5, 2.0), 1.5);
        // A zero remainder keeps the dividend's sign, as `fmod`'s.
        assert_eq!(FloorMod::apply(-4.0, 2.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(FloorMod::apply(4.0, -2.0).to_bits(), 0);
        assert!(FloorMod::apply(1.0, 0.0).is_nan());
        assert!(FloorMod::apply(f32::INFINITY, 2.0).is_nan());
        assert_eq!(FloorMod::apply(1.5, f32::INFINITY), 1.5);
        assert_eq!(FloorMod::apply(-1.5, f32::INFINITY), f32::INFINITY);
        // fmod is exact however far the quotient: 1e30 mod 3.
        let r = FloorMod::apply(1.0e30, 3.0);
        assert!((0.0..3.0).contains(&r) && r == r.trunc());
        // The fix-up's sum is rounded: a tiny negative remainder plus 1.0 is 1.0.
        assert_eq!(FloorMod::apply(-1.0e-10, 1.0), 1.0);
    }

    #[test]
    fn names_and_words() {
        assert_eq!(FloorDivF32::KERNEL, "floor_div_f32");
        assert_eq!(FloorModF32::KERNEL, "floor_mod_f32");
        let shape = BroadcastShape::new(&[4], &[1]).unwrap();
        let params = FloorModF32::new(shape, f32::NEG_INFINITY, f32::INFINITY);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 14);
        assert_eq!(FloorModF32::decode(&mut Words::new(&words)), Ok(params));
    }
}
