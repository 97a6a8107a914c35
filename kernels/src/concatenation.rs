//! CONCATENATION: TFLM's `reference_ops::Concatenation`, over elements of 1, 2 or 4
//! bytes (TFLM requires int8 inputs to share the output's scale and zero point, so no
//! requantization), up to 10 inputs.
//!
//! Bindings of `concatenation`: `0..count` the inputs, `count` the output, and no more (the
//! output is the last binding, so a dispatch's binding count names it).

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The most inputs TFLM's kernel takes (`kMaxInputNum`).
pub const MAX_INPUTS: usize = 10;

/// `concatenation`. Words: `elem_bytes` (1, 2 or 4), `outer` (the product of the
/// dimensions before the axis), `inner` (after it), `count` (1..=10), then each input's
/// extent along the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Concatenation {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Product of the dimensions before the axis.
    pub outer: usize,
    /// Product of the dimensions after the axis.
    pub inner: usize,
    /// Inputs.
    pub count: usize,
    /// Each input's extent along the axis (the first `count`).
    pub axis_sizes: [usize; MAX_INPUTS],
}

impl Concatenation {
    /// The parameters from the output's shape, the inputs' extents along the axis and the
    /// axis (negative counts from the end).
    pub fn new(
        elem_bytes: usize,
        output: &[usize],
        axis_sizes: &[usize],
        axis: i32,
    ) -> Result<Self, KernelError> {
        let rank = output.len() as i32;
        let axis = if axis < 0 { axis + rank } else { axis };
        if axis < 0 || axis >= rank || axis_sizes.is_empty() || axis_sizes.len() > MAX_INPUTS {
            return Err(KernelError::Shape(
                "concatenation axis or input count invalid",
            ));
        }
        let axis = axis as usize;
        let mut c = Self {
            elem_bytes,
            outer: shape::product(&output[..axis])?,
            inner: shape::product(&output[axis + 1..])?,
            count: axis_sizes.len(),
            axis_sizes: [0; MAX_INPUTS],
        };
        c.axis_sizes[..axis_sizes.len()].copy_from_slice(axis_sizes);
        c.validate()?;
        Ok(c)
    }

    fn validate(&self) -> Result<(), KernelError> {
        if !matches!(self.elem_bytes, 1 | 2 | 4) {
            return Err(KernelError::Shape("element size not 1, 2 or 4 bytes"));
        }
        if self.count == 0 || self.count > MAX_INPUTS {
            return Err(KernelError::Shape("concatenation input count not 1..=10"));
        }
        let mut total = 0usize;
        for &a in &self.axis_sizes[..self.count] {
            shape::product(&[self.outer, a, self.inner])?;
            total = total
                .checked_add(a)
                .ok_or(KernelError::Shape("element count overflows"))?;
        }
        shape::product(&[self.outer, total, self.inner])?;
        if self.outer == 0 || self.inner == 0 || total == 0 {
            return Err(KernelError::Shape("dimension zero"));
        }
        Ok(())
    }

    /// The output's extent along the axis.
    pub fn output_axis(&self) -> usize {
        self.axis_sizes[..self.count].iter().sum()
    }

    /// Checks each binding's length in bytes against the parameters, and that the output
    /// is the last binding.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        if binding_lens.len() > self.count + 1 {
            return Err(KernelError::Shape(
                "concatenation binds more than its inputs and output",
            ));
        }
        for (i, &a) in self.axis_sizes[..self.count].iter().enumerate() {
            need(
                binding_lens,
                i,
                self.outer * a * self.inner,
                self.elem_bytes,
            )?;
        }
        need(
            binding_lens,
            self.count,
            self.outer * self.output_axis() * self.inner,
            self.elem_bytes,
        )
    }

    /// Runs the concatenation over the bindings' bytes: for each outer index, each
    /// input's slab in turn.
    pub fn run(&self, inputs: &[&[u8]], output: &mut [u8]) -> Result<(), KernelError> {
        let mut lens = [0usize; MAX_INPUTS + 1];
        if inputs.len() < self.count {
            return Err(KernelError::MissingBinding {
                index: inputs.len() as u32,
                bound: inputs.len() as u32,
            });
        }
        for (l, i) in lens.iter_mut().zip(&inputs[..self.count]) {
            *l = i.len();
        }
        lens[self.count] = output.len();
        self.check(&lens[..=self.count])?;
        let unit = self.inner * self.elem_bytes;
        let mut o = 0;
        for k in 0..self.outer {
            for (input, &a) in inputs.iter().zip(&self.axis_sizes[..self.count]) {
                let n = a * unit;
                output[o..o + n].copy_from_slice(&input[k * n..(k + 1) * n]);
                o += n;
            }
        }
        Ok(())
    }
}

impl KernelParams for Concatenation {
    const KERNEL: &'static str = "concatenation";
    const BINDINGS: &'static [BindingUse] = &{
        let mut bindings = [BindingUse::READ_8; MAX_INPUTS + 1];
        bindings[MAX_INPUTS] = BindingUse::WRITE_8;
        bindings
    };
    const OUTPUT_LAST: bool = true;

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.elem_bytes as u32,
            self.outer as u32,
            self.inner as u32,
            self.count as u32,
        ]);
        out.extend(self.axis_sizes[..self.count].iter().map(|&a| a as u32));
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let elem_bytes = shape::elem_bytes(w)?;
        let outer = shape::dim(w)?;
        let inner = shape::dim(w)?;
        let count = w.usize()?;
        if count == 0 || count > MAX_INPUTS {
            return Err(KernelError::Shape("concatenation input count not 1..=10"));
        }
        let mut c = Self {
            elem_bytes,
            outer,
            inner,
            count,
            axis_sizes: [0; MAX_INPUTS],
        };
        for a in &mut c.axis_sizes[..count] {
            *a = shape::dim(w)?;
        }
        c.validate()?;
        Ok(c)
    }
}
