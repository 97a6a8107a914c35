//! TRANSPOSE: TFLM's `reference_ops::Transpose`, over elements of 1, 2 or 4 bytes, up to
//! 6 dimensions: output dimension `i` is input dimension `perm[i]`.
//!
//! Bindings of `transpose`: 0 input, 1 output, each of `elem_bytes`-byte elements.

use crate::copy::{copy_elem, with_elem_bytes};
use crate::params::{BindingUse, KernelParams, Words};
use crate::row_major::for_each_row;
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The largest rank TRANSPOSE takes here (TFLM's micro kernel takes 5).
pub const MAX_RANK: usize = 6;

/// `transpose`. Words: `elem_bytes` (1, 2 or 4), `rank` (1..=6), the input's `rank`
/// dimensions, then `perm`'s `rank` entries (a permutation of `0..rank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transpose {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Dimensions in use.
    pub rank: usize,
    /// Input dimensions, outermost first (the first `rank`; the rest 1).
    pub input: [usize; MAX_RANK],
    /// The permutation (the first `rank`; the rest unused).
    pub perm: [usize; MAX_RANK],
}

impl Transpose {
    /// The parameters from the input's shape and the `perm` tensor.
    pub fn new(elem_bytes: usize, input: &[usize], perm: &[i32]) -> Result<Self, KernelError> {
        if input.is_empty() || input.len() > MAX_RANK || perm.len() != input.len() {
            return Err(KernelError::Shape(
                "transpose rank 0, above 6 or perm mismatch",
            ));
        }
        let mut t = Self {
            elem_bytes,
            rank: input.len(),
            input: [1; MAX_RANK],
            perm: core::array::from_fn(|i| i),
        };
        t.input[..input.len()].copy_from_slice(input);
        for (p, &q) in t.perm.iter_mut().zip(perm) {
            *p = usize::try_from(q).map_err(|_| KernelError::Shape("negative perm entry"))?;
        }
        t.validate()?;
        Ok(t)
    }

    fn validate(&self) -> Result<(), KernelError> {
        if !matches!(self.elem_bytes, 1 | 2 | 4) {
            return Err(KernelError::Shape("element size not 1, 2 or 4 bytes"));
        }
        if self.input.iter().any(|&d| d == 0 || d > shape::MAX_DIM) {
            return Err(KernelError::Shape("dimension zero or above i32::MAX"));
        }
        shape::product(&self.input)?;
        let mut seen = [false; MAX_RANK];
        for &p in &self.perm[..self.rank] {
            if p >= self.rank || seen[p] {
                return Err(KernelError::Shape("perm is not a permutation"));
            }
            seen[p] = true;
        }
        Ok(())
    }

    /// The output's dimensions (the first `rank`).
    pub fn output(&self) -> [usize; MAX_RANK] {
        let mut out = [1; MAX_RANK];
        for (o, &p) in out.iter_mut().zip(&self.perm[..self.rank]) {
            *o = self.input[p];
        }
        out
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let n = self.input.iter().product();
        need(binding_lens, 0, n, self.elem_bytes)?;
        need(binding_lens, 1, n, self.elem_bytes)
    }

    /// Runs the transpose over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        with_elem_bytes!(self.elem_bytes, E => self.run_e::<E>(input, output));
        Ok(())
    }

    fn run_e<const E: usize>(&self, input: &[u8], output: &mut [u8]) {
        let r = self.rank;
        let mut in_stride = [0usize; MAX_RANK];
        let mut acc = 1;
        for d in (0..r).rev() {
            in_stride[d] = acc;
            acc *= self.input[d];
        }
        let out = self.output();
        // The input stride of each output dimension.
        let stride: [usize; MAX_RANK] =
            core::array::from_fn(|i| if i < r { in_stride[self.perm[i]] } else { 0 });
        let last = r - 1;
        let mut o = 0;
        for_each_row(&out, last, |idx| {
            let base: usize = (0..last).map(|d| idx[d] * stride[d]).sum();
            for k in 0..out[last] {
                copy_elem::<E>(output, o, input, base + k * stride[last]);
                o += 1;
            }
        });
    }
}

impl KernelParams for Transpose {
    const KERNEL: &'static str = "transpose";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.elem_bytes as u32, self.rank as u32]);
        out.extend(self.input[..self.rank].iter().map(|&d| d as u32));
        out.extend(self.perm[..self.rank].iter().map(|&d| d as u32));
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let elem_bytes = shape::elem_bytes(w)?;
        let rank = w.usize()?;
        if rank == 0 || rank > MAX_RANK {
            return Err(KernelError::Shape("transpose rank 0 or above 6"));
        }
        let mut t = Self {
            elem_bytes,
            rank,
            input: [1; MAX_RANK],
            perm: core::array::from_fn(|i| i),
        };
        for d in &mut t.input[..rank] {
            *d = w.usize()?;
        }
        for p in &mut t.perm[..rank] {
            *p = w.usize()?;
        }
        t.validate()?;
        Ok(t)
    }
}
