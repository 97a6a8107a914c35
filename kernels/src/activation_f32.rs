//! The float activation ops, as TFLM's `activations.cc`, `hard_swish.cc` and `elu.cc` run
//! them on float32: RELU (`val < 0 ? 0 : val`), RELU6 (`val > 6 ? 6 : val < 0 ? 0 : val`),
//! HARD_SWISH (`x * min(6, max(0, x + 3)) / 6`, in that order) and ELU (`x < 0 ? expm1(x) :
//! x`). Each is a [`UnaryF32`] kernel of its own; their int8 forms are other kernels
//! (`requantize_s8` for RELU and RELU6).
//!
//! Bindings, every kernel: 0 `input` (`len` `f32`), 1 `output` (`len` `f32`).
//! Element-wise: `output` may alias `input`.

use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// RELU, as the [`UnaryFunctionF32`] of `relu_op_f32` (the built-in `relu_f32` is the
/// examples' in-place kernel with another contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relu;

impl UnaryFunctionF32 for Relu {
    const KERNEL: &'static str = "relu_op_f32";
    const WHAT: &'static str = "relu_op_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        if x < 0.0 {
            0.0
        } else {
            x
        }
    }
}

/// `relu_op_f32`: TFLM's float RELU; negative values to 0, `-0.0` and NaN kept. Words and
/// refusals: [`UnaryF32`]'s.
pub type ReluF32 = UnaryF32<Relu>;

/// RELU6, as the [`UnaryFunctionF32`] of `relu6_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relu6;

impl UnaryFunctionF32 for Relu6 {
    const KERNEL: &'static str = "relu6_f32";
    const WHAT: &'static str = "relu6_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        // `x > 6 ? 6 : x < 0 ? 0 : x`: NaN and -0.0 pass, as through `f32::clamp`.
        x.clamp(0.0, 6.0)
    }
}

/// `relu6_f32`: TFLM's float RELU6. Words and refusals: [`UnaryF32`]'s.
pub type Relu6F32 = UnaryF32<Relu6>;

/// HARD_SWISH, as the [`UnaryFunctionF32`] of `hard_swish_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardSwish;

impl UnaryFunctionF32 for HardSwish {
    const KERNEL: &'static str = "hard_swish_f32";
    const WHAT: &'static str = "hard_swish_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        // std::max(0, x + 3) is `0 < x + 3 ? x + 3 : 0`; std::min(6, m) is `m < 6 ? m : 6`.
        let shifted = x + 3.0;
        let low = if 0.0 < shifted { shifted } else { 0.0 };
        let gate = if low < 6.0 { low } else { 6.0 };
        x * gate / 6.0
    }
}

/// `hard_swish_f32`: TFLM's float HARD_SWISH. Words and refusals: [`UnaryF32`]'s.
pub type HardSwishF32 = UnaryF32<HardSwish>;

/// ELU, as the [`UnaryFunctionF32`] of `elu_f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elu;

impl UnaryFunctionF32 for Elu {
    const KERNEL: &'static str = "elu_f32";
    const WHAT: &'static str = "elu_f32: zero or overflowing length";

    #[inline(always)]
    fn apply(x: f32) -> f32 {
        if x < 0.0 {
            libm::expm1f(x)
        } else {
            x
        }
    }
}

/// `elu_f32`: TFLM's float ELU (`expm1` below zero). Words and refusals: [`UnaryF32`]'s.
pub type EluF32 = UnaryF32<Elu>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::KernelParams;

    fn run<F: UnaryFunctionF32>(input: [f32; 6]) -> [f32; 6] {
        let params = UnaryF32::<F>::prepare(6).unwrap();
        let mut output = [0.0f32; 6];
        params.run(&input, &mut output).unwrap();
        output
    }

    #[test]
    fn known_values() {
        let input = [-4.0, -1.5, -0.0, 0.5, 3.0, 7.0];
        let relu = run::<Relu>(input);
        assert_eq!(relu, [0.0, 0.0, 0.0, 0.5, 3.0, 7.0]);
        // -0.0 is not below 0: kept, as TFLM's comparison keeps it.
        assert!(relu[2].is_sign_negative());
        assert_eq!(run::<Relu6>(input), [0.0, 0.0, 0.0, 0.5, 3.0, 6.0]);
        // x * min(6, max(0, x + 3)) / 6.
        let swish = run::<HardSwish>(input);
        assert_eq!(swish, [-0.0, -0.375, -0.0, 0.5 * 3.5 / 6.0, 3.0, 7.0]);
        let elu = run::<Elu>(input);
        assert_eq!(elu[3..], [0.5, 3.0, 7.0]);
        assert!((elu[0] - (-0.981_684_4)).abs() < 1e-6);
        assert!((elu[1] - (-0.776_869_9)).abs() < 1e-6);
        assert!(run::<Relu>([f32::NAN; 6])[0].is_nan());
    }

    #[test]
    fn names() {
        assert_eq!(ReluF32::KERNEL, "relu_op_f32");
        assert_eq!(Relu6F32::KERNEL, "relu6_f32");
        assert_eq!(HardSwishF32::KERNEL, "hard_swish_f32");
        assert_eq!(EluF32::KERNEL, "elu_f32");
        assert!(EluF32::prepare(0).is_err());
    }
}
