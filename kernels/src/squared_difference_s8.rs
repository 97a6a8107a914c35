//! int8 SQUARED_DIFFERENCE with TFLite's broadcasting, as TFLM's `squared_difference.cc`
//! runs it: both offset inputs shifted left by 7 bits and rescaled to a common scale as
//! int8 ADD's are (multipliers below one), their difference squared in int32 (at most
//! `2^30`), rescaled to the output by `(2 * max_scale)^2 / (2^14 * output_scale)` (a
//! multiplier that may exceed one) and clamped to int8 (no fused activation). The float
//! SQUARED_DIFFERENCE is `arithmetic_f32`'s.
//!
//! Bindings of `squared_difference_s8`: 0 input 1, 1 input 2, 2 output (`i8`), sized by the
//! [`BroadcastShape`].

use crate::add::{AddS8, RealMultipliers};
use crate::broadcast::BroadcastShape;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::quantize_multiplier;
use crate::shape;
use hal_core::kernel::KernelError;

/// Bits both offset int8 inputs are shifted left by (TFLM: `255^2 << 14` fits in int32).
pub const SQUARED_DIFFERENCE_LEFT_SHIFT: i32 = 7;

/// `squared_difference_s8`: [`AddS8`]'s parameters with `left_shift`
/// [`SQUARED_DIFFERENCE_LEFT_SHIFT`], no clamp but int8's and the squared difference in
/// place of the sum. Words: [`BroadcastShape`]'s 12, then `input1_offset`,
/// `input1_multiplier`, `input1_shift` (`-31..=0`), `input2_offset`, `input2_multiplier`,
/// `input2_shift` (`-31..=0`), `output_offset`, `output_multiplier`, `output_shift`
/// (`-31..=30`). Offsets within `-128..=128`, multipliers not negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SquaredDifferenceS8(AddS8);

impl SquaredDifferenceS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `PrepareQuantized` computes them for int8 (in `double`; `2^14 * output_scale`
    /// in `float`, which is exact). The output multiplier may exceed one.
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
    ) -> Result<Self, KernelError> {
        let twice_max = 2.0 * f64::from(input1.0.max(input2.0));
        let denominator = f64::from((1 << (2 * SQUARED_DIFFERENCE_LEFT_SHIFT)) as f32 * output.0);
        let reals = RealMultipliers {
            input1: f64::from(input1.0) / twice_max,
            input2: f64::from(input2.0) / twice_max,
            output: twice_max * twice_max / denominator,
        };
        let params = AddS8::from_real_multipliers(
            shape,
            SQUARED_DIFFERENCE_LEFT_SHIFT,
            reals,
            [input1.1, input2.1, output.1],
            (-128, 127),
            |real| Ok(quantize_multiplier(real)),
        )?;
        Self::new(params)
    }

    /// [`AddS8`]'s parameters (`left_shift` [`SQUARED_DIFFERENCE_LEFT_SHIFT`], the clamp
    /// int8's), refused where `squared_difference_s8`'s words could not hold them.
    fn new(params: AddS8) -> Result<Self, KernelError> {
        if params.left_shift != SQUARED_DIFFERENCE_LEFT_SHIFT
            || (params.act_min, params.act_max) != (-128, 127)
        {
            return Err(KernelError::Shape(
                "SQUARED_DIFFERENCE left shift or clamp not its own",
            ));
        }
        let offset = -128..=128;
        if ![
            params.input1_offset,
            params.input2_offset,
            params.output_offset,
        ]
        .iter()
        .all(|o| offset.contains(o))
        {
            return Err(KernelError::Shape("offset outside -128..=128"));
        }
        if [
            params.input1_multiplier,
            params.input2_multiplier,
            params.output_multiplier,
        ]
        .iter()
        .any(|&m| m < 0)
        {
            return Err(KernelError::Shape("negative multiplier"));
        }
        if !(-31..=0).contains(&params.input1_shift) || !(-31..=0).contains(&params.input2_shift) {
            return Err(KernelError::Shape("input shift outside -31..=0"));
        }
        shape::shift_ok(params.output_shift)?;
        Ok(Self(params))
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check(binding_lens)
    }

    /// Runs the squared difference, each element as TFLM's quantized `SquaredDifference`.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        let rescales = self.0.rescales();
        self.0
            .shape
            .check_and_apply(input1, input2, output, |a, b| {
                self.0.combine_with(&rescales, a, b, squared_difference)
            })
    }
}

/// `(a - b)^2` of the rescaled inputs. TFLM's input multipliers are at most 1/2, so
/// `|a - b| <= 2^15` and the square fits; other parameters wrap, as the WGSL kernel does.
#[inline(always)]
fn squared_difference(a: i32, b: i32) -> i32 {
    let diff = a.wrapping_sub(b);
    diff.wrapping_mul(diff)
}

impl KernelParams for SquaredDifferenceS8 {
    const KERNEL: &'static str = "squared_difference_s8";
    const BINDINGS: &'static [BindingUse] = AddS8::BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        let p = &self.0;
        p.shape.encode(out);
        out.extend(
            [
                p.input1_offset,
                p.input1_multiplier,
                p.input1_shift,
                p.input2_offset,
                p.input2_multiplier,
                p.input2_shift,
                p.output_offset,
                p.output_multiplier,
                p.output_shift,
            ]
            .map(|v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = BroadcastShape::decode(w)?;
        Self::new(AddS8 {
            shape,
            left_shift: SQUARED_DIFFERENCE_LEFT_SHIFT,
            input1_offset: w.i32()?,
            input1_multiplier: w.i32()?,
            input1_shift: w.i32()?,
            input2_offset: w.i32()?,
            input2_multiplier: w.i32()?,
            input2_shift: w.i32()?,
            output_offset: w.i32()?,
            output_multiplier: w.i32()?,
            output_shift: w.i32()?,
            act_min: -128,
            act_max: 127,
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn squares_real_differences() {
        // Scales 0.1 in, 0.1 out, zero points 0: (a - b)^2 / 10 in steps of 0.1.
        let shape = BroadcastShape::new(&[3], &[1]).unwrap();
        let params =
            SquaredDifferenceS8::from_quantization(shape, (0.1, 0), (0.1, 0), (0.1, 0)).unwrap();
        let mut out = [0i8; 3];
        params.run(&[10, -20, 127], &[0], &mut out).unwrap();
        assert_eq!(out, [10, 40, 127]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(
            SquaredDifferenceS8::decode(&mut Words::new(&words)).unwrap(),
            params
        );
    }

    #[test]
    fn hostile_words_wrap_without_panic() {
        let shape = BroadcastShape::new(&[2], &[2]).unwrap();
        let mut words = Vec::new();
        shape.encode(&mut words);
        words.extend([128, i32::MAX, 0, -128, i32::MAX, 0, 128, i32::MAX, 30].map(|v| v as u32));
        let params = SquaredDifferenceS8::decode(&mut Words::new(&words)).unwrap();
        let mut out = [0i8; 2];
        params.run(&[127, -128], &[-128, 127], &mut out).unwrap();
        words[12 + 8] = 31;
        assert!(SquaredDifferenceS8::decode(&mut Words::new(&words)).is_err());
    }
}
