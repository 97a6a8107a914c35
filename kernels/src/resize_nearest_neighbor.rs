//! RESIZE_NEAREST_NEIGHBOR, as TFLM's `resize_nearest_neighbor.cc` runs it
//! (`reference_ops::ResizeNearestNeighbor`): every output pixel of an NHWC tensor copies
//! the input pixel `GetNearestNeighbor` picks along height and along width, in `f32` as
//! TFLM computes it, with `align_corners` and `half_pixel_centers`.
//!
//! Bindings of `resize_nearest_neighbor`: 0 input, 1 output, each of `elem_bytes`-byte
//! elements (1, 2 or 4).

use crate::copy::{copy_elem, with_elem_bytes};
use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// TFLM's `GetNearestNeighbor`: the input index output index `index` copies, along a
/// dimension of `input_size` resized to `output_size` (both at least 1).
pub fn nearest_neighbor(
    index: usize,
    input_size: usize,
    output_size: usize,
    align_corners: bool,
    half_pixel_centers: bool,
) -> usize {
    let scale = if align_corners && output_size > 1 {
        (input_size - 1) as f32 / (output_size - 1) as f32
    } else {
        input_size as f32 / output_size as f32
    };
    let offset = if half_pixel_centers { 0.5 } else { 0.0 };
    let position = (index as f32 + offset) * scale;
    let picked = if align_corners {
        libm::roundf(position)
    } else {
        libm::floorf(position)
    } as i64;
    let picked = picked.min(input_size as i64 - 1);
    // TFLM clamps below only with half-pixel centres; without them the position is never
    // negative.
    picked.max(0) as usize
}

/// `resize_nearest_neighbor`. Words: `elem_bytes` (1, 2 or 4), `batches`, `input_height`,
/// `input_width`, `depth`, `output_height`, `output_width`, `align_corners`,
/// `half_pixel_centers` (0 or 1). `decode` refuses another element size, a zero dimension,
/// flags other than 0 and 1 and sizes whose byte counts overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeNearestNeighbor {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Images.
    pub batches: usize,
    /// The input's height.
    pub input_height: usize,
    /// The input's width.
    pub input_width: usize,
    /// Channels.
    pub depth: usize,
    /// The output's height.
    pub output_height: usize,
    /// The output's width.
    pub output_width: usize,
    /// TFLite's `align_corners`.
    pub align_corners: bool,
    /// TFLite's `half_pixel_centers`.
    pub half_pixel_centers: bool,
}

impl ResizeNearestNeighbor {
    const WHAT: &'static str = "resize_nearest_neighbor: element size not 1, 2 or 4, a zero or overflowing dimension, or a flag not 0 or 1";

    /// These parameters, if `decode` would take them.
    pub fn validate(self) -> Result<Self, KernelError> {
        let dims = [
            self.batches,
            self.input_height,
            self.input_width,
            self.depth,
            self.output_height,
            self.output_width,
        ];
        let bytes = |height: usize, width: usize| {
            [self.batches, height, width, self.depth, self.elem_bytes]
                .iter()
                .try_fold(1usize, |product, &dim| product.checked_mul(dim))
                .filter(|&total| total <= i32::MAX as usize)
        };
        if !matches!(self.elem_bytes, 1 | 2 | 4)
            || dims.contains(&0)
            || bytes(self.input_height, self.input_width).is_none()
            || bytes(self.output_height, self.output_width).is_none()
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 and 1 hold the input's and the output's elements.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let pixels = |height: usize, width: usize| self.batches * height * width * self.depth;
        need(
            binding_lens,
            0,
            pixels(self.input_height, self.input_width),
            self.elem_bytes,
        )?;
        need(
            binding_lens,
            1,
            pixels(self.output_height, self.output_width),
            self.elem_bytes,
        )
    }

    /// Runs the resize over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        let pick = |index, input_size, output_size| {
            nearest_neighbor(
                index,
                input_size,
                output_size,
                self.align_corners,
                self.half_pixel_centers,
            )
        };
        let depth = self.depth;
        let mut out = 0;
        with_elem_bytes!(self.elem_bytes, E => {
            for batch in 0..self.batches {
                for y in 0..self.output_height {
                    let in_y = pick(y, self.input_height, self.output_height);
                    let row = (batch * self.input_height + in_y) * self.input_width;
                    for x in 0..self.output_width {
                        let in_x = pick(x, self.input_width, self.output_width);
                        let pixel = (row + in_x) * depth;
                        for channel in 0..depth {
                            copy_elem::<E>(output, out, input, pixel + channel);
                            out += 1;
                        }
                    }
                }
            }
        });
        Ok(())
    }
}

impl KernelParams for ResizeNearestNeighbor {
    const KERNEL: &'static str = "resize_nearest_neighbor";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.elem_bytes as u32,
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.depth as u32,
            self.output_height as u32,
            self.output_width as u32,
            u32::from(self.align_corners),
            u32::from(self.half_pixel_centers),
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut next = || words.usize();
        let (elem_bytes, batches, input_height, input_width) = (next()?, next()?, next()?, next()?);
        let (depth, output_height, output_width) = (next()?, next()?, next()?);
        let flag = |value: usize| match value {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(KernelError::Shape(Self::WHAT)),
        };
        let align_corners = flag(next()?)?;
        let half_pixel_centers = flag(next()?)?;
        Self {
            elem_bytes,
            batches,
            input_height,
            input_width,
            depth,
            output_height,
            output_width,
            align_corners,
            half_pixel_centers,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    fn params(align_corners: bool, half_pixel_centers: bool) -> ResizeNearestNeighbor {
        ResizeNearestNeighbor {
            elem_bytes: 1,
            batches: 1,
            input_height: 2,
            input_width: 3,
            depth: 1,
            output_height: 4,
            output_width: 5,
            align_corners,
            half_pixel_centers,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn picks_as_tflm() {
        // 3 → 5: scale 0.6, floor(x * 0.6).
        let picks: Vec<usize> = (0..5)
            .map(|x| nearest_neighbor(x, 3, 5, false, false))
            .collect();
        assert_eq!(picks, [0, 0, 1, 1, 2]);
        // Half-pixel centres: floor((x + 0.5) * 0.6).
        let picks: Vec<usize> = (0..5)
            .map(|x| nearest_neighbor(x, 3, 5, false, true))
            .collect();
        assert_eq!(picks, [0, 0, 1, 2, 2]);
        // Aligned corners: round(x * 0.5).
        let picks: Vec<usize> = (0..5)
            .map(|x| nearest_neighbor(x, 3, 5, true, false))
            .collect();
        assert_eq!(picks, [0, 1, 1, 2, 2]);
        // Downscaling 5 → 2.
        let picks: Vec<usize> = (0..2)
            .map(|x| nearest_neighbor(x, 5, 2, false, false))
            .collect();
        assert_eq!(picks, [0, 2]);
    }

    #[test]
    fn copies_pixels() {
        let input = [1u8, 2, 3, 4, 5, 6];
        let mut output = [0u8; 20];
        params(false, false).run(&input, &mut output).unwrap();
        assert_eq!(
            output,
            [1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 4, 4, 5, 5, 6]
        );
        let mut words = Vec::new();
        let p = params(true, true);
        p.encode(&mut words);
        assert_eq!(
            ResizeNearestNeighbor::decode(&mut Words::new(&words)),
            Ok(p)
        );
        words[7] = 2;
        assert!(ResizeNearestNeighbor::decode(&mut Words::new(&words)).is_err());
        assert!(p.run(&input, &mut [0u8; 19]).is_err());
    }
}
