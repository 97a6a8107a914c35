//! MIRROR_PAD, as TFLM's `mirror_pad.cc` runs it: each output element copies the input
//! element its index mirrors into, REFLECT without repeating the edge (offset 1), SYMMETRIC
//! repeating it (offset 0), over elements of 1, 2 or 4 bytes, up to 5 dimensions. Each
//! padding is at most the dimension less the offset (TensorFlow's rule; TFLM reads outside
//! the input past it).
//!
//! Bindings of `mirror_pad`: 0 input, 1 output, each of `elem_bytes`-byte elements.

use crate::pad::{Pad, MAX_RANK};
use crate::params::{BindingUse, KernelParams, Words};
use crate::row_major::for_each_row;
use hal_core::kernel::KernelError;

/// `mirror_pad`. Words: [`Pad`]'s, with the offset (0 SYMMETRIC, 1 REFLECT) in place of the
/// pad value. `decode` refuses other offsets and paddings beyond the dimension less the
/// offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MirrorPad {
    /// The shapes and paddings (its `value` unused, 0).
    pub geometry: Pad,
    /// 1 for REFLECT, 0 for SYMMETRIC.
    pub offset: usize,
}

impl MirrorPad {
    /// The parameters from the input's shape, the `paddings` rows and the mode.
    pub fn new(
        elem_bytes: usize,
        reflect: bool,
        input: &[usize],
        paddings: &[[i32; 2]],
    ) -> Result<Self, KernelError> {
        Self {
            geometry: Pad::new(elem_bytes, 0, input, paddings)?,
            offset: usize::from(reflect),
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        let geometry = &self.geometry;
        let fits = (0..MAX_RANK).all(|d| {
            let most = geometry.input[d].saturating_sub(self.offset);
            geometry.before[d] <= most && geometry.after[d] <= most
        });
        if self.offset > 1 || !fits {
            return Err(KernelError::Shape(
                "mirror_pad: an offset not 0 or 1, or a padding beyond the dimension less it",
            ));
        }
        Ok(self)
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.geometry.check(binding_lens)
    }

    /// The input index along dimension `d` that output index `index` copies.
    #[inline(always)]
    fn source(&self, d: usize, index: usize) -> usize {
        let (before, dim) = (self.geometry.before[d], self.geometry.input[d]);
        if index < before {
            before - 1 + self.offset - index
        } else if index < before + dim {
            index - before
        } else {
            dim - 1 - self.offset - (index - before - dim)
        }
    }

    /// Runs the padding over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        let size = self.geometry.elem_bytes;
        let out = self.geometry.output();
        let last = MAX_RANK - 1;
        let mut at = 0;
        for_each_row(&out, last, |index| {
            let row = (0..last).fold(0, |row, d| {
                row * self.geometry.input[d] + self.source(d, index[d])
            });
            for k in 0..out[last] {
                let from = (row * self.geometry.input[last] + self.source(last, k)) * size;
                output[at..at + size].copy_from_slice(&input[from..from + size]);
                at += size;
            }
        });
        Ok(())
    }
}

impl KernelParams for MirrorPad {
    const KERNEL: &'static str = "mirror_pad";
    const BINDINGS: &'static [BindingUse] = Pad::BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        Pad {
            value: self.offset as u32,
            ..self.geometry
        }
        .encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let with_offset = Pad::decode(words)?;
        Self {
            geometry: Pad {
                value: 0,
                ..with_offset
            },
            offset: with_offset.value as usize,
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
    fn reflect_and_symmetric() {
        let input = [1u8, 2, 3];
        let mut out = [0u8; 7];
        MirrorPad::new(1, true, &[3], &[[2, 2]])
            .unwrap()
            .run(&input, &mut out)
            .unwrap();
        assert_eq!(out, [3, 2, 1, 2, 3, 2, 1]);
        MirrorPad::new(1, false, &[3], &[[2, 2]])
            .unwrap()
            .run(&input, &mut out)
            .unwrap();
        assert_eq!(out, [2, 1, 1, 2, 3, 3, 2]);
        assert!(MirrorPad::new(1, true, &[3], &[[3, 0]]).is_err());
        assert!(MirrorPad::new(1, false, &[3], &[[3, 3]]).is_ok());
    }

    #[test]
    fn two_dimensions_and_words() {
        // [[1, 2], [3, 4]] REFLECT by one row before and one column after.
        let params = MirrorPad::new(2, true, &[2, 2], &[[1, 0], [0, 1]]).unwrap();
        let input: Vec<u8> = [1u16, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut out = [0u8; 18];
        params.run(&input, &mut out).unwrap();
        let got: Vec<u16> = out
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(got, [3, 4, 3, 1, 2, 1, 3, 4, 3]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(MirrorPad::decode(&mut Words::new(&words)).unwrap(), params);
        words[1] = 2;
        assert!(MirrorPad::decode(&mut Words::new(&words)).is_err());
    }
}
