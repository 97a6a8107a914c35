//! The float broadcasting arithmetic ops beside ADD and MUL, as TFLM's `sub.cc`, `div.cc`
//! and `squared_difference.cc` run them on float32: SUB (`a - b`) and DIV (`a / b`, IEEE:
//! a zero divisor gives an infinity or NaN, as TFLM's), each clamped to its fused
//! activation's range, and SQUARED_DIFFERENCE (`(a - b) * (a - b)`, no activation: the
//! lowering passes an infinite range). Each is a [`BroadcastF32`] kernel of its own.
//!
//! Bindings, every kernel: 0 input 1, 1 input 2, 2 output (`f32` each), sized by the
//! [`BroadcastShape`](crate::broadcast::BroadcastShape).

use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};

/// Difference, as the [`BinaryFunctionF32`] of SUB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sub;

impl BinaryFunctionF32 for Sub {
    const KERNEL: &'static str = "sub_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a - b
    }
}

/// `sub_f32`: `clamp(a - b)` with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type SubF32 = BroadcastF32<Sub>;

/// Quotient, as the [`BinaryFunctionF32`] of DIV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Div;

impl BinaryFunctionF32 for Div {
    const KERNEL: &'static str = "div_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a / b
    }
}

/// `div_f32`: `clamp(a / b)` with TFLite's broadcasting. Words: [`BroadcastF32`]'s.
pub type DivF32 = BroadcastF32<Div>;

/// Squared difference, as the [`BinaryFunctionF32`] of SQUARED_DIFFERENCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SquaredDifference;

impl BinaryFunctionF32 for SquaredDifference {
    const KERNEL: &'static str = "squared_difference_f32";

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        let difference = a - b;
        difference * difference
    }
}

/// `squared_difference_f32`: `(a - b)²` with TFLite's broadcasting. Words:
/// [`BroadcastF32`]'s.
pub type SquaredDifferenceF32 = BroadcastF32<SquaredDifference>;

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::broadcast::BroadcastShape;
    use crate::params::{KernelParams, Words};

    #[test]
    fn broadcast_and_clamp() {
        let shape = BroadcastShape::new(&[2, 3], &[3]).unwrap();
        let a = [1.0, 2.0, 3.0, -4.0, 5.0, 0.0];
        let b = [0.5, -2.0, 0.0];
        let mut out = [0.0f32; 6];
        SubF32::new(shape, f32::MIN, f32::MAX)
            .run(&a, &b, &mut out)
            .unwrap();
        assert_eq!(out, [0.5, 4.0, 3.0, -4.5, 7.0, 0.0]);
        SubF32::new(shape, 0.0, 6.0).run(&a, &b, &mut out).unwrap();
        assert_eq!(out, [0.5, 4.0, 3.0, 0.0, 6.0, 0.0]);
        DivF32::new(shape, f32::MIN, f32::MAX)
            .run(&a, &b, &mut out)
            .unwrap();
        assert_eq!(out[..2], [2.0, -1.0]);
        // A zero divisor: the activation's range clamps infinity to f32::MAX, as TFLM's.
        assert_eq!(out[2], f32::MAX);
        assert!(out[5].is_nan());
        let unclamped = SquaredDifferenceF32::new(shape, f32::NEG_INFINITY, f32::INFINITY);
        unclamped.run(&a, &b, &mut out).unwrap();
        assert_eq!(out, [0.25, 16.0, 9.0, 20.25, 49.0, 0.0]);
    }

    #[test]
    fn names_and_words() {
        assert_eq!(SubF32::KERNEL, "sub_f32");
        assert_eq!(DivF32::KERNEL, "div_f32");
        assert_eq!(SquaredDifferenceF32::KERNEL, "squared_difference_f32");
        let shape = BroadcastShape::new(&[4], &[1]).unwrap();
        let params = DivF32::new(shape, f32::NEG_INFINITY, f32::INFINITY);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 14);
        assert_eq!(DivF32::decode(&mut Words::new(&words)), Ok(params));
    }
}
