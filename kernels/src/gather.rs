//! GATHER, as TFLM's `gather.cc` runs it: slices of the input along `axis` picked by int32
//! indices, for every batch (the first `batch_dims` dimensions, shared by input and
//! indices) and every outer index (the dimensions between them and `axis`). An index
//! outside the axis is an error here (TFLM only checks it in debug builds and reads past
//! the input otherwise).
//!
//! Bindings of `gather`: 0 input (elements of `elem_bytes`), 1 indices (int32), 2 output
//! (elements of `elem_bytes`).

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// `gather`. Words: `elem_bytes` (1, 2 or 4), `batches`, `outer`, `axis_size`, `inner`,
/// `coords` (indices per batch). `decode` refuses another element size, a zero count and
/// sizes whose byte counts overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gather {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// The product of the batch dimensions.
    pub batches: usize,
    /// The product of the dimensions between the batch dimensions and the axis.
    pub outer: usize,
    /// The gathered dimension's size.
    pub axis_size: usize,
    /// The product of the dimensions after the axis.
    pub inner: usize,
    /// Indices per batch.
    pub coords: usize,
}

impl Gather {
    const WHAT: &'static str = "gather: element size not 1, 2 or 4, or a zero or overflowing size";
    const OUT_OF_RANGE: &'static str = "gather: an index outside the gathered dimension";

    /// These parameters, if `decode` would take them.
    pub fn validate(self) -> Result<Self, KernelError> {
        let sizes = [
            self.batches,
            self.outer,
            self.axis_size,
            self.inner,
            self.coords,
        ];
        let bytes = |along: usize| {
            [self.batches, self.outer, along, self.inner, self.elem_bytes]
                .iter()
                .try_fold(1usize, |product, &size| product.checked_mul(size))
                .filter(|&total| total <= i32::MAX as usize)
        };
        if !matches!(self.elem_bytes, 1 | 2 | 4)
            || sizes.contains(&0)
            || bytes(self.axis_size).is_none()
            || bytes(self.coords).is_none()
            || self.batches.checked_mul(self.coords).is_none()
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0, 1 and 2 hold the input's, the indices' and the output's elements.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let block = self.batches * self.outer * self.inner;
        need(binding_lens, 0, block * self.axis_size, self.elem_bytes)?;
        need(binding_lens, 1, self.batches * self.coords, 4)?;
        need(binding_lens, 2, block * self.coords, self.elem_bytes)
    }

    /// Runs the gather over the bindings' bytes (the indices little-endian int32).
    pub fn run(&self, input: &[u8], indices: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), indices.len(), output.len()])?;
        let run = self.inner * self.elem_bytes;
        let mut out = 0;
        for batch in 0..self.batches {
            for outer in 0..self.outer {
                for coord in 0..self.coords {
                    let at = (batch * self.coords + coord) * 4;
                    let mut word = [0u8; 4];
                    word.copy_from_slice(&indices[at..at + 4]);
                    let index = usize::try_from(i32::from_le_bytes(word))
                        .ok()
                        .filter(|&index| index < self.axis_size)
                        .ok_or(KernelError::Shape(Self::OUT_OF_RANGE))?;
                    let from = ((batch * self.outer + outer) * self.axis_size + index) * run;
                    output[out..out + run].copy_from_slice(&input[from..from + run]);
                    out += run;
                }
            }
        }
        Ok(())
    }
}

impl KernelParams for Gather {
    const KERNEL: &'static str = "gather";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_32, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.elem_bytes as u32,
            self.batches as u32,
            self.outer as u32,
            self.axis_size as u32,
            self.inner as u32,
            self.coords as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut next = || words.usize();
        Self {
            elem_bytes: next()?,
            batches: next()?,
            outer: next()?,
            axis_size: next()?,
            inner: next()?,
            coords: next()?,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    fn indices(values: &[i32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn picks_rows_and_refuses_strays() {
        // A [3, 2] input, rows picked by [2, 0, 2].
        let params = Gather {
            elem_bytes: 1,
            batches: 1,
            outer: 1,
            axis_size: 3,
            inner: 2,
            coords: 3,
        }
        .validate()
        .unwrap();
        let mut output = [0u8; 6];
        params
            .run(&[1, 2, 3, 4, 5, 6], &indices(&[2, 0, 2]), &mut output)
            .unwrap();
        assert_eq!(output, [5, 6, 1, 2, 5, 6]);
        for stray in [3, -1] {
            let result = params.run(&[0; 6], &indices(&[0, stray, 0]), &mut output);
            assert_eq!(result, Err(KernelError::Shape(Gather::OUT_OF_RANGE)));
        }
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(Gather::decode(&mut Words::new(&words)), Ok(params));
        words[0] = 3;
        assert!(Gather::decode(&mut Words::new(&words)).is_err());
    }

    #[test]
    fn batches_take_their_own_indices() {
        // Input [2, 2] (two batches of two), indices [[1], [0]], batch_dims 1, axis 1.
        let params = Gather {
            elem_bytes: 4,
            batches: 2,
            outer: 1,
            axis_size: 2,
            inner: 1,
            coords: 1,
        };
        let input: Vec<u8> = [10i32, 11, 20, 21]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut output = [0u8; 8];
        params.run(&input, &indices(&[1, 0]), &mut output).unwrap();
        assert_eq!(output, indices(&[11, 20])[..]);
    }
}
