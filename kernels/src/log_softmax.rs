//! LOG_SOFTMAX on float32, as TFLM's `log_softmax.cc` runs it (`reference_ops::LogSoftmax`):
//! per row of the last dimension, `x - max - log(Σ exp(x - max))`, the maximum from the
//! lowest float, the sum in `f32` in order from 0. (TFLM's int8 LOG_SOFTMAX, a fixed-point
//! table of its own, is not here.)
//!
//! Bindings of `log_softmax_f32`: 0 input, 1 output (`f32` each).

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// `log_softmax_f32`. Words: `rows`, `depth`. `decode` refuses a zero count and sizes whose
/// byte count overflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSoftmaxF32 {
    /// Rows: the product of every dimension but the last.
    pub rows: usize,
    /// The last dimension.
    pub depth: usize,
}

impl LogSoftmaxF32 {
    const WHAT: &'static str = "log_softmax_f32: a zero or overflowing size";

    /// The parameters for `rows` rows of `depth`.
    pub fn new(rows: usize, depth: usize) -> Result<Self, KernelError> {
        let bytes = rows
            .checked_mul(depth)
            .and_then(|count| count.checked_mul(4))
            .filter(|&total| total <= i32::MAX as usize);
        if rows == 0 || depth == 0 || bytes.is_none() {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(Self { rows, depth })
    }

    /// Bindings 0 and 1 hold `rows * depth` floats.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        need(binding_lens, 0, self.rows * self.depth, 4)?;
        need(binding_lens, 1, self.rows * self.depth, 4)
    }

    /// Runs the kernel; `output` may be `input`'s own row storage only through separate
    /// slices (it reads each row whole before writing it).
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[input.len() * 4, output.len() * 4])?;
        for (row, out) in input
            .chunks_exact(self.depth)
            .zip(output.chunks_exact_mut(self.depth))
            .take(self.rows)
        {
            // std::max(max, x): `max < x ? x : max`.
            let max = row
                .iter()
                .fold(f32::MIN, |max, &x| if max < x { x } else { max });
            let sum = row.iter().fold(0.0f32, |sum, &x| sum + libm::expf(x - max));
            let log_sum = libm::logf(sum);
            for (y, &x) in out.iter_mut().zip(row) {
                *y = x - max - log_sum;
            }
        }
        Ok(())
    }
}

impl KernelParams for LogSoftmaxF32 {
    const KERNEL: &'static str = "log_softmax_f32";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.rows as u32, self.depth as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::new(words.usize()?, words.usize()?)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn rows_normalise_in_log_space() {
        let params = LogSoftmaxF32::new(2, 2).unwrap();
        let mut out = [0.0f32; 4];
        params.run(&[0.0, 0.0, 1000.0, 0.0], &mut out).unwrap();
        let half = -core::f32::consts::LN_2;
        assert!((out[0] - half).abs() < 1e-6 && (out[1] - half).abs() < 1e-6);
        // No overflow: the maximum comes off first.
        assert_eq!(out[2], 0.0);
        assert_eq!(out[3], -1000.0);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(LogSoftmaxF32::decode(&mut Words::new(&words)), Ok(params));
        assert!(LogSoftmaxF32::new(0, 2).is_err());
    }
}
