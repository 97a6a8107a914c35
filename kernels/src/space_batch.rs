//! SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND, as TFLM's reference `SpaceToBatchND` and
//! `BatchToSpaceND` run them on NHWC tensors (a 3-D `[batch, width, channels]` one extended
//! with a height of 1, its block and paddings of one dimension): SPACE_TO_BATCH_ND pads the
//! spatial dimensions and moves each block offset into the batch (the offset outermost);
//! BATCH_TO_SPACE_ND moves it back and crops. One kernel, `space_batch`, each output
//! element copying the input element it comes from (or the pad byte), over elements of 1,
//! 2 or 4 bytes.
//!
//! Bindings of `space_batch`: 0 input, 1 output, each of `elem_bytes`-byte elements.

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// `space_batch`. Words: `elem_bytes` (1, 2 or 4), `to_batch` (1 SPACE_TO_BATCH_ND, 0
/// BATCH_TO_SPACE_ND), `pad_byte` (every byte of a padded element), the input's four
/// dimensions, the output's four, the block's height and width, and the leading padding
/// (or crop) of height and width. `decode` refuses shapes whose elements map outside the
/// input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceBatch {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// SPACE_TO_BATCH_ND (else BATCH_TO_SPACE_ND).
    pub to_batch: bool,
    /// The byte every byte of a padded element holds (SPACE_TO_BATCH_ND).
    pub pad_byte: u8,
    /// Input `[batch, height, width, channels]`.
    pub input: [usize; 4],
    /// Output `[batch, height, width, channels]`.
    pub output: [usize; 4],
    /// Block `[height, width]`.
    pub block: [usize; 2],
    /// Leading padding (SPACE_TO_BATCH_ND) or crop (BATCH_TO_SPACE_ND) `[top, left]`.
    pub before: [usize; 2],
}

impl SpaceBatch {
    /// These parameters, if `decode` would take them: every output element's source
    /// inside the input (or in the padding).
    pub fn validate(self) -> Result<Self, KernelError> {
        const WHAT: &str =
            "space_batch: a zero or overflowing size, or elements mapped outside the input";
        let [in_batch, in_height, in_width, in_depth] = self.input;
        let [out_batch, out_height, out_width, out_depth] = self.output;
        let [block_height, block_width] = self.block;
        let sizes = self.input.iter().chain(&self.output).chain(&self.block);
        let positive = sizes
            .clone()
            .all(|&size| (1..=shape::MAX_DIM).contains(&size));
        let products = shape::product(&self.input).is_ok() && shape::product(&self.output).is_ok();
        let blocks = block_height.checked_mul(block_width);
        let fits = match (self.to_batch, blocks) {
            (_, None) => false,
            // Every output batch takes a block offset below the block's size.
            (true, Some(blocks)) => in_batch
                .checked_mul(blocks)
                .is_some_and(|batches| out_batch <= batches),
            // Every output row and column falls inside the input's rows and columns, and
            // every block offset's batch exists.
            (false, Some(blocks)) => {
                let within = |out: usize, before: usize, block: usize, input: usize| {
                    out.checked_add(before)
                        .zip(input.checked_mul(block))
                        .is_some_and(|(end, limit)| end <= limit)
                };
                within(out_height, self.before[0], block_height, in_height)
                    && within(out_width, self.before[1], block_width, in_width)
                    && blocks.checked_mul(out_batch).is_some_and(|n| n <= in_batch)
            }
        };
        if !positive
            || !products
            || !fits
            || in_depth != out_depth
            || self.elem_bytes > 4
            || self.elem_bytes == 3
            || self.elem_bytes == 0
        {
            return Err(KernelError::Shape(WHAT));
        }
        Ok(self)
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        need(
            binding_lens,
            0,
            self.input.iter().product(),
            self.elem_bytes,
        )?;
        need(
            binding_lens,
            1,
            self.output.iter().product(),
            self.elem_bytes,
        )
    }

    /// The input pixel `(batch, row, column)` output pixel `(batch, row, column)` copies, or
    /// `None` in the padding.
    pub fn source(&self, batch: usize, row: usize, column: usize) -> Option<(usize, usize, usize)> {
        let [block_height, block_width] = self.block;
        let [top, left] = self.before;
        if self.to_batch {
            let in_batch = self.input[0];
            let shift = batch / in_batch;
            let (padded_row, padded_column) = (
                row * block_height + shift / block_width,
                column * block_width + shift % block_width,
            );
            let (source_row, source_column) = (
                padded_row.checked_sub(top)?,
                padded_column.checked_sub(left)?,
            );
            (source_row < self.input[1] && source_column < self.input[2]).then_some((
                batch % in_batch,
                source_row,
                source_column,
            ))
        } else {
            let (row, column) = (row + top, column + left);
            let offset = (row % block_height) * block_width + column % block_width;
            Some((
                offset * self.output[0] + batch,
                row / block_height,
                column / block_width,
            ))
        }
    }

    /// Runs the kernel over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        let [out_batch, out_height, out_width, depth] = self.output;
        let pixel = depth * self.elem_bytes;
        let mut at = 0;
        for batch in 0..out_batch {
            for row in 0..out_height {
                for column in 0..out_width {
                    let out = &mut output[at..at + pixel];
                    match self.source(batch, row, column) {
                        Some((b, r, c)) => {
                            let from = ((b * self.input[1] + r) * self.input[2] + c) * pixel;
                            out.copy_from_slice(&input[from..from + pixel]);
                        }
                        None => out.fill(self.pad_byte),
                    }
                    at += pixel;
                }
            }
        }
        Ok(())
    }
}

impl KernelParams for SpaceBatch {
    const KERNEL: &'static str = "space_batch";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.elem_bytes as u32,
            u32::from(self.to_batch),
            u32::from(self.pad_byte),
        ]);
        let sizes = self.input.iter().chain(&self.output).chain(&self.block);
        out.extend(sizes.chain(&self.before).map(|&v| v as u32));
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let elem_bytes = shape::elem_bytes(words)?;
        let to_batch = shape::flag(words)?;
        let pad_byte = u8::try_from(words.u32()?)
            .map_err(|_| KernelError::Shape("space_batch: a pad byte above 255"))?;
        let mut dims = [0usize; 12];
        for dim in &mut dims {
            *dim = shape::count(words)?;
        }
        Self {
            elem_bytes,
            to_batch,
            pad_byte,
            input: [dims[0], dims[1], dims[2], dims[3]],
            output: [dims[4], dims[5], dims[6], dims[7]],
            block: [dims[8], dims[9]],
            before: [dims[10], dims[11]],
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
    fn space_to_batch_and_back() {
        // A 1x4x4x1 image of 0..16, blocks of 2x2, no padding: four 2x2 images.
        let to_batch = SpaceBatch {
            elem_bytes: 1,
            to_batch: true,
            pad_byte: 0,
            input: [1, 4, 4, 1],
            output: [4, 2, 2, 1],
            block: [2, 2],
            before: [0, 0],
        }
        .validate()
        .unwrap();
        let image: Vec<u8> = (0..16).collect();
        let mut batches = [0u8; 16];
        to_batch.run(&image, &mut batches).unwrap();
        assert_eq!(
            batches,
            [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]
        );
        let back = SpaceBatch {
            to_batch: false,
            input: [4, 2, 2, 1],
            output: [1, 4, 4, 1],
            ..to_batch
        }
        .validate()
        .unwrap();
        let mut again = [0u8; 16];
        back.run(&batches, &mut again).unwrap();
        assert_eq!(again.to_vec(), image);
    }

    #[test]
    fn pads_crops_and_words() {
        // A 1x1x2x1 row padded by one column on the left to a width of 4, blocks of 1x2.
        let params = SpaceBatch {
            elem_bytes: 1,
            to_batch: true,
            pad_byte: 9,
            input: [1, 1, 2, 1],
            output: [2, 1, 2, 1],
            block: [1, 2],
            before: [0, 1],
        }
        .validate()
        .unwrap();
        let mut out = [0u8; 4];
        params.run(&[5, 6], &mut out).unwrap();
        assert_eq!(out, [9, 6, 5, 9]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(SpaceBatch::decode(&mut Words::new(&words)).unwrap(), params);
        // Crops reaching past the input are refused.
        let cropped = SpaceBatch {
            to_batch: false,
            input: [2, 1, 2, 1],
            output: [1, 1, 4, 1],
            before: [0, 1],
            ..params
        };
        assert!(cropped.validate().is_err());
    }
}
