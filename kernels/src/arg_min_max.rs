//! ARG_MAX and ARG_MIN, as TFLM's `arg_min_max.cc` runs them (`reference_ops::ArgMinMax`):
//! for every outer and inner index, the first index along the axis of the largest (or
//! smallest) value, as int32. Floats compare as TensorFlow's: a NaN never wins and loses to
//! any number (all NaN give index 0); int8 compares the raw values.
//!
//! Bindings of `arg_min_max`: 0 input (int8 or float32 by word 0, as bytes), 1 output
//! (int32).

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// `arg_min_max`. Words: `float` (0 for int8, 1 for float32), `outer`, `axis_size`,
/// `inner`, `is_max` (1 for ARG_MAX, 0 for ARG_MIN). `decode` refuses flags other than 0
/// and 1, a zero size and sizes whose byte counts overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgMinMax {
    /// float32 input (else int8).
    pub float: bool,
    /// The product of the dimensions before the axis.
    pub outer: usize,
    /// The reduced dimension's size.
    pub axis_size: usize,
    /// The product of the dimensions after the axis.
    pub inner: usize,
    /// ARG_MAX (else ARG_MIN).
    pub is_max: bool,
}

impl ArgMinMax {
    const WHAT: &'static str = "arg_min_max: a flag not 0 or 1, or a zero or overflowing size";

    /// These parameters, if `decode` would take them.
    pub fn validate(self) -> Result<Self, KernelError> {
        let bytes = [self.outer, self.axis_size, self.inner, 4]
            .iter()
            .try_fold(1usize, |product, &size| product.checked_mul(size))
            .filter(|&total| total <= i32::MAX as usize);
        if [self.outer, self.axis_size, self.inner].contains(&0) || bytes.is_none() {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    fn input_bytes(&self) -> usize {
        if self.float {
            4
        } else {
            1
        }
    }

    /// Bindings 0 and 1 hold the input's elements and the output's int32 indices.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let outputs = self.outer * self.inner;
        need(
            binding_lens,
            0,
            outputs * self.axis_size,
            self.input_bytes(),
        )?;
        need(binding_lens, 1, outputs, 4)
    }

    /// Whether `candidate` replaces `current` (TFLM's comparator).
    #[inline(always)]
    fn wins(&self, candidate: f32, current: f32) -> bool {
        !candidate.is_nan()
            && (current.is_nan()
                || if self.is_max {
                    candidate > current
                } else {
                    candidate < current
                })
    }

    /// Runs the kernel over the input's bytes.
    pub fn run(&self, input: &[u8], output: &mut [i32]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len() * 4])?;
        let value = |index: usize| -> f32 {
            if self.float {
                let mut word = [0u8; 4];
                word.copy_from_slice(&input[index * 4..index * 4 + 4]);
                f32::from_le_bytes(word)
            } else {
                // Every int8 value is exactly a float, in the same order.
                f32::from(input[index] as i8)
            }
        };
        for outer in 0..self.outer {
            for inner in 0..self.inner {
                let at = |i: usize| (outer * self.axis_size + i) * self.inner + inner;
                let mut best = value(at(0));
                let mut best_index = 0;
                for i in 1..self.axis_size {
                    let candidate = value(at(i));
                    if self.wins(candidate, best) {
                        best = candidate;
                        best_index = i;
                    }
                }
                output[outer * self.inner + inner] = best_index as i32;
            }
        }
        Ok(())
    }
}

impl KernelParams for ArgMinMax {
    const KERNEL: &'static str = "arg_min_max";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            u32::from(self.float),
            self.outer as u32,
            self.axis_size as u32,
            self.inner as u32,
            u32::from(self.is_max),
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let flag = |value: u32| match value {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(KernelError::Shape(Self::WHAT)),
        };
        let float = flag(words.u32()?)?;
        let (outer, axis_size, inner) = (words.usize()?, words.usize()?, words.usize()?);
        let is_max = flag(words.u32()?)?;
        Self {
            float,
            outer,
            axis_size,
            inner,
            is_max,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn first_extreme_along_the_axis() {
        // [2, 3] int8 along axis 1: rows [1, 7, 7] and [-5, -9, -9].
        let params = ArgMinMax {
            float: false,
            outer: 2,
            axis_size: 3,
            inner: 1,
            is_max: true,
        };
        let input = [1u8, 7, 7, (-5i8) as u8, (-9i8) as u8, (-9i8) as u8];
        let mut output = [0i32; 2];
        params.run(&input, &mut output).unwrap();
        assert_eq!(output, [1, 0]);
        let params = ArgMinMax {
            is_max: false,
            ..params
        };
        params.run(&input, &mut output).unwrap();
        assert_eq!(output, [0, 1]);
    }

    #[test]
    fn nan_never_wins() {
        let params = ArgMinMax {
            float: true,
            outer: 1,
            axis_size: 3,
            inner: 1,
            is_max: true,
        };
        let bytes =
            |values: [f32; 3]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let mut output = [0i32; 1];
        params
            .run(&bytes([f32::NAN, -1.0, f32::NAN]), &mut output)
            .unwrap();
        assert_eq!(output, [1]);
        params.run(&bytes([f32::NAN; 3]), &mut output).unwrap();
        assert_eq!(output, [0]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(ArgMinMax::decode(&mut Words::new(&words)), Ok(params));
        words[4] = 2;
        assert!(ArgMinMax::decode(&mut Words::new(&words)).is_err());
    }
}
