//! The bounded RELUs TFLite has as ops of their own: RELU_N1_TO_1 (`[-1, 1]`) and
//! RELU_0_TO_1 (`[0, 1]`), as TensorFlow Lite's `activations.cc` runs them (TFLM has neither
//! op).
//!
//! - float32: `x > upper ? upper : x < lower ? lower : x` (NaN and `-0.0` pass), each a
//!   [`UnaryF32`] kernel of its own (`relu_n1_to_1_f32`, `relu_0_to_1_f32`).
//! - int8: TFLite's `QuantizedReluX`, which is `requantize_s8` (no kernel of its own): the
//!   input requantized to the output's scale with `QuantizeMultiplier(input_scale /
//!   output_scale)` (the division in `f32`), plus the output zero point, clamped to
//!   `[max(-128, zp + round(lower / output_scale)), min(127, zp + round(upper /
//!   output_scale))]` ([`bounded_relu_s8`]).
//!
//! Bindings, every kernel: 0 `input` (`len` elements), 1 `output` (`len` elements).

use hal_core::kernel::KernelError;

use crate::quantize::RequantizeS8;
use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// The real interval a bounded RELU clamps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// RELU_N1_TO_1: `[-1, 1]`.
    MinusOneToOne,
    /// RELU_0_TO_1: `[0, 1]`.
    ZeroToOne,
}

impl Bounds {
    /// `(lower, upper)`.
    pub const fn interval(self) -> (f32, f32) {
        match self {
            Self::MinusOneToOne => (-1.0, 1.0),
            Self::ZeroToOne => (0.0, 1.0),
        }
    }
}

/// TFLite's float clamp: `x > upper ? upper : x < lower ? lower : x`.
#[inline(always)]
fn clamp(x: f32, (lower, upper): (f32, f32)) -> f32 {
    if x > upper {
        upper
    } else if x < lower {
        lower
    } else {
        x
    }
}

/// RELU_N1_TO_1, as the [`UnaryFunctionF32`] of `relu_n1_to_1_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReluN1To1;

impl UnaryFunctionF32 for ReluN1To1 {
    const KERNEL: &'static str = "relu_n1_to_1_f32";
    const WHAT: &'static str = "relu_n1_to_1_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        clamp(x, Bounds::MinusOneToOne.interval())
    }
}

/// `relu_n1_to_1_f32`: TFLite's float RELU_N1_TO_1. Words and refusals: [`UnaryF32`]'s.
pub type ReluN1To1F32 = UnaryF32<ReluN1To1>;

/// RELU_0_TO_1, as the [`UnaryFunctionF32`] of `relu_0_to_1_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relu0To1;

impl UnaryFunctionF32 for Relu0To1 {
    const KERNEL: &'static str = "relu_0_to_1_f32";
    const WHAT: &'static str = "relu_0_to_1_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        clamp(x, Bounds::ZeroToOne.interval())
    }
}

/// `relu_0_to_1_f32`: TFLite's float RELU_0_TO_1. Words and refusals: [`UnaryF32`]'s.
pub type Relu0To1F32 = UnaryF32<Relu0To1>;

/// `zero_point + round(bound / scale)` as TFLite's `QuantizedReluX` computes it (the
/// division in `f32`, `roundf`, the conversion saturating where C++'s is undefined), then
/// clamped to int8.
fn quantized_bound(bound: f32, scale: f32, zero_point: i32) -> i32 {
    let steps = libm::roundf(bound / scale) as i32;
    zero_point.saturating_add(steps).clamp(-128, 127)
}

/// The `requantize_s8` parameters of TFLite's int8 bounded RELU of `len` elements
/// (`QuantizedReluX<int8_t>(lower, upper, …)`): RELU's requantization
/// ([`RequantizeS8::relu`]) with the clamp to `bounds` quantized at the output's scale.
/// Refuses what [`RequantizeS8::relu`] refuses.
pub fn bounded_relu_s8(
    len: usize,
    bounds: Bounds,
    (input_scale, input_zero_point): (f32, i32),
    (output_scale, output_zero_point): (f32, i32),
) -> Result<RequantizeS8, KernelError> {
    let mut params = RequantizeS8::relu(
        len,
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
    )?;
    let (lower, upper) = bounds.interval();
    // Both in int8, and lower <= upper: the zero point lies between them (lower <= 0 <
    // upper), each clamped to int8 keeps that order.
    params.act_min = quantized_bound(lower, output_scale, output_zero_point);
    params.act_max = quantized_bound(upper, output_scale, output_zero_point);
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{KernelParams, Words};

    fn run<F: UnaryFunctionF32>(input: [f32; 6]) -> [f32; 6] {
        let params = UnaryF32::<F>::prepare(6).unwrap();
        let mut output = [0.0f32; 6];
        params.run(&input, &mut output).unwrap();
        output
    }

    #[test]
    fn float_clamps() {
        let input = [-4.0, -0.5, -0.0, 0.5, 1.0, 7.0];
        assert_eq!(run::<ReluN1To1>(input), [-1.0, -0.5, -0.0, 0.5, 1.0, 1.0]);
        assert_eq!(run::<Relu0To1>(input), [0.0, 0.0, -0.0, 0.5, 1.0, 1.0]);
        assert!(run::<Relu0To1>([-0.0; 6])[0].is_sign_negative());
        assert!(run::<ReluN1To1>([f32::NAN; 6])[0].is_nan());
        assert_eq!(ReluN1To1F32::KERNEL, "relu_n1_to_1_f32");
        assert_eq!(Relu0To1F32::KERNEL, "relu_0_to_1_f32");
    }

    #[test]
    fn int8_clamps_at_the_quantized_bounds() {
        // Output scale 0.1, zero point 3: [-1, 1] is [-7, 13], [0, 1] is [3, 13].
        let p = bounded_relu_s8(4, Bounds::MinusOneToOne, (0.05, -2), (0.1, 3)).unwrap();
        assert_eq!((p.act_min, p.act_max), (-7, 13));
        let p = bounded_relu_s8(4, Bounds::ZeroToOne, (0.05, -2), (0.1, 3)).unwrap();
        assert_eq!((p.act_min, p.act_max), (3, 13));
        let input = [-128i8, -2, 20, 127];
        let mut output = [0i8; 4];
        p.run(&input, &mut output).unwrap();
        // (x + 2) / 2 + 3, clamped to [3, 13].
        assert_eq!(output, [3, 3, 13, 13]);
        // Bounds beyond int8 clamp to it; the words decode to the same parameters.
        let p = bounded_relu_s8(4, Bounds::MinusOneToOne, (0.5, 0), (0.001, 100)).unwrap();
        assert_eq!((p.act_min, p.act_max), (-128, 127));
        let mut words = alloc::vec::Vec::new();
        p.encode(&mut words);
        assert_eq!(RequantizeS8::decode(&mut Words::new(&words)), Ok(p));
        assert!(bounded_relu_s8(4, Bounds::ZeroToOne, (0.0, 0), (0.1, 0)).is_err());
    }
}
