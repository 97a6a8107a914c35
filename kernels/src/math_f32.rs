//! The float element-wise math ops, as TFLM's `elementwise.cc`, `neg.cc`, `exp.cc`,
//! `floor.cc`, `ceil.cc` and `round.cc` run them on float32: ABS, NEG, SQUARE, SQRT, RSQRT,
//! EXP, LOG, FLOOR, CEIL, ROUND, SIN and COS. Each is a [`UnaryF32`] kernel of its own
//! (`abs_f32`, …), so a firmware links only the functions its model uses.
//!
//! TFLM calls the C library's single-precision functions (`std::sin(float)` is `sinf`);
//! these call `libm`'s, within an ulp of them. ROUND is TFLM's `RoundToNearest`, halves to
//! even; RSQRT is `1.f / std::sqrt(x)`, two roundings.
//!
//! Bindings, every kernel: 0 `input` (`len` `f32`), 1 `output` (`len` `f32`).
//! Element-wise: `output` may alias `input`.

use crate::unary_f32::{UnaryF32, UnaryFunctionF32};

/// A float element-wise function: its unit type, its [`UnaryF32`] alias and its kernel.
macro_rules! math_f32 {
    ($(#[$doc:meta])* $function:ident, $alias:ident, $kernel:literal, |$x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $function;

        impl UnaryFunctionF32 for $function {
            const KERNEL: &'static str = $kernel;
            const WHAT: &'static str = concat!($kernel, ": zero or overflowing length");

            #[inline(always)]
            fn apply($x: f32) -> f32 {
                $body
            }
        }

        #[doc = concat!("`", $kernel, "`: [`", stringify!($function), "`] element by element. Words and refusals: [`UnaryF32`]'s.")]
        pub type $alias = UnaryF32<$function>;
    };
}

math_f32!(
    /// ABS: `|x|` (`std::abs`).
    Abs, AbsF32, "abs_f32", |x| libm::fabsf(x)
);
math_f32!(
    /// NEG: `-x`.
    Neg, NegF32, "neg_f32", |x| -x
);
math_f32!(
    /// SQUARE: `x * x`.
    Square, SquareF32, "square_f32", |x| x * x
);
math_f32!(
    /// SQRT: `sqrtf(x)` (NaN below zero).
    Sqrt, SqrtF32, "sqrt_f32", |x| libm::sqrtf(x)
);
math_f32!(
    /// RSQRT: `1 / sqrtf(x)`, rounded twice as TFLM's.
    Rsqrt, RsqrtF32, "rsqrt_f32", |x| 1.0 / libm::sqrtf(x)
);
math_f32!(
    /// EXP: `expf(x)`.
    Exp, ExpF32, "exp_f32", |x| libm::expf(x)
);
math_f32!(
    /// LOG: `logf(x)` (`-inf` at zero, NaN below).
    Log, LogF32, "log_f32", |x| libm::logf(x)
);
math_f32!(
    /// FLOOR: `floorf(x)`.
    Floor, FloorF32, "floor_f32", |x| libm::floorf(x)
);
math_f32!(
    /// CEIL: `ceilf(x)`.
    Ceil, CeilF32, "ceil_f32", |x| libm::ceilf(x)
);
math_f32!(
    /// ROUND: to the nearest integer, halves to even (TFLM's `RoundToNearest`).
    Round, RoundF32, "round_f32", |x| libm::rintf(x)
);
math_f32!(
    /// SIN: `sinf(x)`.
    Sin, SinF32, "sin_f32", |x| libm::sinf(x)
);
math_f32!(
    /// COS: `cosf(x)`.
    Cos, CosF32, "cos_f32", |x| libm::cosf(x)
);

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::params::{KernelParams, Words};

    fn run<F: UnaryFunctionF32>(input: &[f32]) -> [f32; 6] {
        let params = UnaryF32::<F>::prepare(input.len()).unwrap();
        let mut output = [0.0f32; 6];
        params.run(input, &mut output[..input.len()]).unwrap();
        output
    }

    #[test]
    fn known_values() {
        let input = [-2.5, -0.5, 0.5, 1.5, 2.5, 4.0];
        assert_eq!(run::<Abs>(&input), [2.5, 0.5, 0.5, 1.5, 2.5, 4.0]);
        assert_eq!(run::<Neg>(&input), [2.5, 0.5, -0.5, -1.5, -2.5, -4.0]);
        assert_eq!(run::<Square>(&input), [6.25, 0.25, 0.25, 2.25, 6.25, 16.0]);
        assert_eq!(run::<Floor>(&input), [-3.0, -1.0, 0.0, 1.0, 2.0, 4.0]);
        assert_eq!(run::<Ceil>(&input), [-2.0, -0.0, 1.0, 2.0, 3.0, 4.0]);
        // Halves go to the even neighbour, as TFLM's RoundToNearest.
        assert_eq!(run::<Round>(&input), [-2.0, -0.0, 0.0, 2.0, 2.0, 4.0]);
        let roots = run::<Sqrt>(&[0.0, 1.0, 4.0, 9.0, 2.25, 16.0]);
        assert_eq!(roots, [0.0, 1.0, 2.0, 3.0, 1.5, 4.0]);
        let inverse = run::<Rsqrt>(&[1.0, 4.0, 16.0, 0.25, 64.0, 0.0]);
        assert_eq!(inverse, [1.0, 0.5, 0.25, 2.0, 0.125, f32::INFINITY]);
        assert!(run::<Sqrt>(&[-1.0])[0].is_nan());
        let logs = run::<Log>(&[1.0, 0.0, core::f32::consts::E, 1.0, 1.0, 1.0]);
        assert_eq!(logs[..2], [0.0, f32::NEG_INFINITY]);
        assert!((logs[2] - 1.0).abs() < 1e-7);
        let exps = run::<Exp>(&[0.0, 1.0, -200.0, 100.0, 0.0, 0.0]);
        assert_eq!(exps[0], 1.0);
        assert!((exps[1] - core::f32::consts::E).abs() < 1e-6);
        assert_eq!(exps[2..4], [0.0, f32::INFINITY]);
        let half_pi = core::f32::consts::FRAC_PI_2;
        let sines = run::<Sin>(&[0.0, half_pi, -half_pi, 0.0, 0.0, 0.0]);
        assert_eq!(sines[..3], [0.0, 1.0, -1.0]);
        let cosines = run::<Cos>(&[0.0, core::f32::consts::PI, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(cosines[..2], [1.0, -1.0]);
    }

    #[test]
    fn names_words_and_refusals() {
        assert_eq!(AbsF32::KERNEL, "abs_f32");
        assert_eq!(CosF32::KERNEL, "cos_f32");
        let params = SinF32::prepare(5).unwrap();
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.as_slice(), &[5]);
        assert_eq!(SinF32::decode(&mut Words::new(&words)), Ok(params));
        assert!(SinF32::decode(&mut Words::new(&[0])).is_err());
        assert!(params.check(&[20, 16]).is_err());
        assert!(params.check(&[20, 20]).is_ok());
        let mut short = [0.0f32; 4];
        assert!(params.run(&[0.0; 5], &mut short).is_err());
    }
}
