//! STRIDED_SLICE: TFLM's `reference_ops::StridedSlice`, over elements of 1, 2 or 4
//! bytes, shapes extended to 5 dimensions. The importer resolves begin/end/strides and
//! the masks into per-axis `start`/`stop` with [`StridedSlice::resolve`] (TFLM's
//! `StridedSlicePadIndices`, `StridedSliceStartForAxis` and `StridedSliceEndForAxis`;
//! TFLM's micro kernel ignores `ellipsis_mask` and `new_axis_mask`, as this does).
//!
//! Bindings of `strided_slice`: 0 input, 1 output, each of `elem_bytes`-byte elements.

use crate::copy::{copy_elem, with_elem_bytes};
use crate::params::{BindingUse, KernelParams, Words};
use crate::row_major::for_each_row;
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The rank the kernel works in.
pub const RANK: usize = 5;

/// `strided_slice`. Words: `elem_bytes` (1, 2 or 4), the input's five dimensions, then
/// per axis (outermost first) `start`, `stop`, `stride` as `i32`. Axis `d` visits
/// `start, start + stride, …` while `< stop` (stride > 0) or `> stop` (stride < 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StridedSlice {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Input dimensions, right-aligned, leading 1s.
    pub input: [usize; RANK],
    /// First index per axis.
    pub start: [i32; RANK],
    /// Bound per axis (exclusive).
    pub stop: [i32; RANK],
    /// Step per axis, non-zero.
    pub stride: [i32; RANK],
}

fn clamp(v: i32, lo: i32, hi: i32) -> i32 {
    if hi < v {
        hi
    } else if v < lo {
        lo
    } else {
        v
    }
}

impl StridedSlice {
    /// TFLM's resolution of a STRIDED_SLICE node: `begin`, `end` and `strides` (one per
    /// input dimension, rank up to 4 in TFLM, 5 here) and the `begin_mask`, `end_mask`,
    /// `shrink_axis_mask` bits, padded to 5 axes (added axes take everything).
    #[allow(clippy::too_many_arguments)]
    pub fn resolve(
        elem_bytes: usize,
        input: &[usize],
        begin: &[i32],
        end: &[i32],
        strides: &[i32],
        begin_mask: u32,
        end_mask: u32,
        shrink_axis_mask: u32,
    ) -> Result<Self, KernelError> {
        let n = input.len();
        if n > RANK || begin.len() != n || end.len() != n || strides.len() != n {
            return Err(KernelError::Shape("strided slice rank above 5 or mismatch"));
        }
        let pad = RANK - n;
        let mut dims = [1usize; RANK];
        dims[pad..].copy_from_slice(input);
        let (mut b, mut e, mut s) = ([0i32; RANK], [1i32; RANK], [1i32; RANK]);
        b[pad..].copy_from_slice(begin);
        e[pad..].copy_from_slice(end);
        s[pad..].copy_from_slice(strides);
        let fill = (1u32 << pad) - 1;
        let begin_mask = (begin_mask << pad) | fill;
        let end_mask = (end_mask << pad) | fill;
        let shrink = shrink_axis_mask << pad;
        let mut out = Self {
            elem_bytes,
            input: dims,
            start: [0; RANK],
            stop: [0; RANK],
            stride: s,
        };
        for axis in 0..RANK {
            if dims[axis] > shape::MAX_DIM {
                return Err(KernelError::Shape("dimension above i32::MAX"));
            }
            let size = dims[axis] as i32;
            let stride = s[axis];
            if stride == 0 {
                return Err(KernelError::Shape("zero stride"));
            }
            let mut start = b[axis];
            if start < 0 {
                start = start.wrapping_add(size);
            }
            start = if stride > 0 {
                clamp(start, 0, size)
            } else {
                clamp(start, -1, size - 1)
            };
            if begin_mask & (1 << axis) != 0 {
                start = if stride > 0 { 0 } else { size - 1 };
            }
            let stop = if shrink & (1 << axis) != 0 {
                if start >= size {
                    start
                } else {
                    start + 1
                }
            } else {
                let mut stop = e[axis];
                if stop < 0 {
                    stop = stop.wrapping_add(size);
                }
                stop = if stride > 0 {
                    clamp(stop, 0, size)
                } else {
                    clamp(stop, -1, size - 1)
                };
                if end_mask & (1 << axis) != 0 {
                    stop = if stride > 0 { size } else { -1 };
                }
                stop
            };
            out.start[axis] = start;
            out.stop[axis] = stop;
        }
        out.validate()?;
        Ok(out)
    }

    /// Indices axis `d` visits.
    pub fn extent(&self, d: usize) -> usize {
        let (start, stop, stride) = (
            i64::from(self.start[d]),
            i64::from(self.stop[d]),
            i64::from(self.stride[d]),
        );
        let n = if stride > 0 {
            (stop - start + stride - 1).div_euclid(stride)
        } else {
            (start - stop + (-stride) - 1).div_euclid(-stride)
        };
        n.max(0) as usize
    }

    fn validate(&self) -> Result<(), KernelError> {
        if !matches!(self.elem_bytes, 1 | 2 | 4) {
            return Err(KernelError::Shape("element size not 1, 2 or 4 bytes"));
        }
        if self.input.iter().any(|&d| d == 0 || d > shape::MAX_DIM) {
            return Err(KernelError::Shape("dimension zero or above i32::MAX"));
        }
        shape::product(&self.input)?;
        for d in 0..RANK {
            if self.stride[d] == 0 {
                return Err(KernelError::Shape("zero stride"));
            }
            let n = self.extent(d) as i64;
            if n > 0 {
                let first = i64::from(self.start[d]);
                let last = first + (n - 1) * i64::from(self.stride[d]);
                let size = self.input[d] as i64;
                if first < 0 || first >= size || last < 0 || last >= size {
                    return Err(KernelError::Shape("slice index outside the input"));
                }
            }
        }
        Ok(())
    }

    /// Output elements.
    pub fn output_len(&self) -> usize {
        (0..RANK).map(|d| self.extent(d)).product()
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        need(
            binding_lens,
            0,
            self.input.iter().product(),
            self.elem_bytes,
        )?;
        need(binding_lens, 1, self.output_len(), self.elem_bytes)
    }

    /// Runs the slice over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        with_elem_bytes!(self.elem_bytes, E => self.run_e::<E>(input, output));
        Ok(())
    }

    fn run_e<const E: usize>(&self, input: &[u8], output: &mut [u8]) {
        let ext: [usize; RANK] = core::array::from_fn(|d| self.extent(d));
        if ext.contains(&0) {
            return;
        }
        let mut in_stride = [0i64; RANK];
        let mut acc = 1i64;
        for d in (0..RANK).rev() {
            in_stride[d] = acc;
            acc *= self.input[d] as i64;
        }
        let step: [i64; RANK] = core::array::from_fn(|d| i64::from(self.stride[d]) * in_stride[d]);
        let origin: i64 = (0..RANK)
            .map(|d| i64::from(self.start[d]) * in_stride[d])
            .sum();
        let last = RANK - 1;
        let mut o = 0;
        for_each_row(&ext, last, |idx| {
            let base = origin + (0..last).map(|d| idx[d] as i64 * step[d]).sum::<i64>();
            for k in 0..ext[last] {
                // Validated: every visited index lies inside the input.
                copy_elem::<E>(output, o, input, (base + k as i64 * step[last]) as usize);
                o += 1;
            }
        });
    }
}

impl KernelParams for StridedSlice {
    const KERNEL: &'static str = "strided_slice";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.elem_bytes as u32]);
        out.extend(self.input.iter().map(|&d| d as u32));
        for d in 0..RANK {
            out.extend([
                self.start[d] as u32,
                self.stop[d] as u32,
                self.stride[d] as u32,
            ]);
        }
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let elem_bytes = shape::elem_bytes(w)?;
        let mut s = Self {
            elem_bytes,
            input: [0; RANK],
            start: [0; RANK],
            stop: [0; RANK],
            stride: [0; RANK],
        };
        for d in &mut s.input {
            *d = w.usize()?;
        }
        for d in 0..RANK {
            s.start[d] = w.i32()?;
            s.stop[d] = w.i32()?;
            s.stride[d] = w.i32()?;
        }
        s.validate()?;
        Ok(s)
    }
}
