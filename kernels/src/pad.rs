//! PAD (and PADV2): TFLM's `reference_ops::Pad`, over elements of 1, 2 or 4 bytes, up to
//! 5 dimensions. The pad value is the `constant_values` tensor's element where the op has
//! one, else the output's zero point (int8) or 0 (float).
//!
//! Bindings of `pad`: 0 input, 1 output, each of `elem_bytes`-byte elements.

use crate::copy::with_elem_bytes;
use crate::params::{BindingUse, KernelParams, Words};
use crate::row_major::for_each_row;
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The largest rank PAD takes (TFLM's `PadKernelMaxDimensionCount`).
pub const MAX_RANK: usize = 5;

/// `pad`. Words: `elem_bytes` (1, 2 or 4), `value`, then the input's five dimensions, the
/// five leading paddings and the five trailing paddings, shapes right-aligned and extended
/// with leading 1s (and paddings 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pad {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// The pad element: its low `elem_bytes` bytes, little-endian (an int8 zero point
    /// `z` is `z as u8 as u32`, a float its bits).
    pub value: u32,
    /// Input dimensions, outermost first.
    pub input: [usize; MAX_RANK],
    /// Elements before the input per dimension.
    pub before: [usize; MAX_RANK],
    /// Elements after the input per dimension.
    pub after: [usize; MAX_RANK],
}

impl Pad {
    /// The parameters from the input's shape and the `paddings` tensor's `[before, after]`
    /// rows (one per dimension, non-negative).
    pub fn new(
        elem_bytes: usize,
        value: u32,
        input: &[usize],
        paddings: &[[i32; 2]],
    ) -> Result<Self, KernelError> {
        if input.len() > MAX_RANK || paddings.len() != input.len() {
            return Err(KernelError::Shape("pad rank above 5 or paddings mismatch"));
        }
        let k = MAX_RANK - input.len();
        let mut p = Self {
            elem_bytes,
            value,
            input: [1; MAX_RANK],
            before: [0; MAX_RANK],
            after: [0; MAX_RANK],
        };
        for (i, (&d, &[b, a])) in input.iter().zip(paddings).enumerate() {
            if b < 0 || a < 0 {
                return Err(KernelError::Shape("negative padding"));
            }
            p.input[k + i] = d;
            p.before[k + i] = b as usize;
            p.after[k + i] = a as usize;
        }
        p.validate()?;
        Ok(p)
    }

    fn validate(&self) -> Result<(), KernelError> {
        if !matches!(self.elem_bytes, 1 | 2 | 4) {
            return Err(KernelError::Shape("element size not 1, 2 or 4 bytes"));
        }
        for i in 0..MAX_RANK {
            if self.input[i] == 0 || self.input[i] > shape::MAX_DIM {
                return Err(KernelError::Shape("dimension zero or above i32::MAX"));
            }
        }
        shape::product(&self.input)?;
        let mut out = [0; MAX_RANK];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.input[i]
                .checked_add(self.before[i])
                .and_then(|v| v.checked_add(self.after[i]))
                .ok_or(KernelError::Shape("padded dimension overflows"))?;
        }
        shape::product(&out)?;
        Ok(())
    }

    /// The output's dimensions.
    pub fn output(&self) -> [usize; MAX_RANK] {
        core::array::from_fn(|i| self.input[i] + self.before[i] + self.after[i])
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
            self.output().iter().product(),
            self.elem_bytes,
        )
    }

    /// Runs the padding over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        with_elem_bytes!(self.elem_bytes, E => self.run_e::<E>(input, output));
        Ok(())
    }

    fn run_e<const E: usize>(&self, input: &[u8], output: &mut [u8]) {
        let out = self.output();
        let value = self.value.to_le_bytes();
        let value = &value[..E];
        let last = MAX_RANK - 1;
        let row = out[last];
        let mut r = 0;
        for_each_row(&out, last, |idx| {
            let dst = &mut output[r * row * E..(r + 1) * row * E];
            let inside = (0..last)
                .all(|d| idx[d] >= self.before[d] && idx[d] < self.before[d] + self.input[d]);
            if inside {
                let src_row =
                    (0..last).fold(0, |row, d| row * self.input[d] + (idx[d] - self.before[d]));
                let n = self.input[last];
                let src = &input[src_row * n * E..(src_row + 1) * n * E];
                let (b, rest) = dst.split_at_mut(self.before[last] * E);
                let (mid, a) = rest.split_at_mut(n * E);
                mid.copy_from_slice(src);
                b.chunks_exact_mut(E).for_each(|c| c.copy_from_slice(value));
                a.chunks_exact_mut(E).for_each(|c| c.copy_from_slice(value));
            } else {
                dst.chunks_exact_mut(E)
                    .for_each(|c| c.copy_from_slice(value));
            }
            r += 1;
        });
    }
}

impl KernelParams for Pad {
    const KERNEL: &'static str = "pad";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.elem_bytes as u32, self.value]);
        out.extend(
            self.input
                .iter()
                .chain(&self.before)
                .chain(&self.after)
                .map(|&v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let elem_bytes = shape::elem_bytes(w)?;
        let value = w.u32()?;
        let mut p = Self {
            elem_bytes,
            value,
            input: [0; MAX_RANK],
            before: [0; MAX_RANK],
            after: [0; MAX_RANK],
        };
        for v in p.input.iter_mut() {
            *v = w.usize()?;
        }
        for v in p.before.iter_mut().chain(p.after.iter_mut()) {
            *v = shape::count(w)?;
        }
        p.validate()?;
        Ok(p)
    }
}
