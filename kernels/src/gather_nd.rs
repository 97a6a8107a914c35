//! GATHER_ND, as TFLM's `gather_nd.cc` runs it: each row of the int32 indices (its last
//! dimension, `index_depth` of at most 5) names a slice of the input (the dimensions after
//! the first `index_depth`), copied whole into the output. Like TFLM's, the check is on the
//! slice's flat position (`Σ index × stride` from 0 and within the input); a position
//! outside is an error here, where TFLM's invoke fails.
//!
//! Bindings of `gather_nd`: 0 input (elements of `elem_bytes`), 1 indices (int32), 2 output
//! (elements of `elem_bytes`).

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The deepest index rows TFLM takes (`MAX_INDICES_ND`).
pub const MAX_INDEX_DEPTH: usize = 5;

/// `gather_nd`. Words: `elem_bytes` (1, 2 or 4), `slices` (index rows), `slice_len`
/// (elements per slice), `input_len` (the input's elements), `index_depth` (1 to 5), then
/// the five strides of the indexed dimensions (elements; unused ones 0). `decode` refuses
/// other sizes and strides that do not divide the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatherNd {
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Index rows: the output's slices.
    pub slices: usize,
    /// Elements per slice.
    pub slice_len: usize,
    /// The input's elements.
    pub input_len: usize,
    /// Indices per row.
    pub index_depth: usize,
    /// Elements one step along each indexed dimension spans.
    pub strides: [usize; MAX_INDEX_DEPTH],
}

impl GatherNd {
    const WHAT: &'static str =
        "gather_nd: element size not 1, 2 or 4, an index depth not 1 to 5, or a zero or overflowing size";
    const OUT_OF_RANGE: &'static str = "gather_nd: an index row outside the input";

    /// The parameters for an input of `input_shape` and indices of `index_shape` (the last
    /// dimension the depth).
    pub fn new(
        elem_bytes: usize,
        input_shape: &[usize],
        index_shape: &[usize],
    ) -> Result<Self, KernelError> {
        let (&index_depth, rows) = index_shape
            .split_last()
            .ok_or(KernelError::Shape(Self::WHAT))?;
        if index_depth == 0 || index_depth > input_shape.len().min(MAX_INDEX_DEPTH) {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let mut strides = [0; MAX_INDEX_DEPTH];
        for (dim, stride) in strides.iter_mut().enumerate().take(index_depth) {
            *stride = shape::product(&input_shape[dim + 1..])?;
        }
        Self {
            elem_bytes,
            slices: shape::product(rows)?,
            slice_len: shape::product(&input_shape[index_depth..])?,
            input_len: shape::product(input_shape)?,
            index_depth,
            strides,
        }
        .validate()
    }

    /// These parameters, if `decode` would take them.
    pub fn validate(self) -> Result<Self, KernelError> {
        let depth_ok = (1..=MAX_INDEX_DEPTH).contains(&self.index_depth);
        let sizes_ok = [self.slices, self.slice_len, self.input_len]
            .iter()
            .all(|&size| (1..=shape::MAX_DIM).contains(&size));
        let output_ok = self
            .slices
            .checked_mul(self.slice_len)
            .and_then(|len| len.checked_mul(self.elem_bytes))
            .is_some_and(|bytes| bytes <= shape::MAX_DIM);
        let strides_ok = self.strides.iter().enumerate().all(|(dim, &stride)| {
            if dim < self.index_depth {
                stride >= 1 && self.input_len % stride == 0
            } else {
                stride == 0
            }
        });
        if !matches!(self.elem_bytes, 1 | 2 | 4)
            || !depth_ok
            || !sizes_ok
            || !output_ok
            || !strides_ok
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        need(binding_lens, 0, self.input_len, self.elem_bytes)?;
        need(binding_lens, 1, self.slices * self.index_depth, 4)?;
        need(
            binding_lens,
            2,
            self.slices * self.slice_len,
            self.elem_bytes,
        )
    }

    /// The first input element of slice `row` (its indices `row_indices`), if the whole
    /// slice lies in the input.
    pub fn slice_start(&self, row_indices: &[i32]) -> Option<usize> {
        let start = row_indices
            .iter()
            .zip(&self.strides)
            .map(|(&index, &stride)| i64::from(index) * stride as i64)
            .sum::<i64>();
        let start = usize::try_from(start).ok()?;
        (start + self.slice_len <= self.input_len).then_some(start)
    }

    /// Runs the kernel over the input's and output's bytes.
    pub fn run(&self, input: &[u8], indices: &[i32], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input.len(), indices.len() * 4, output.len()])?;
        let slice_bytes = self.slice_len * self.elem_bytes;
        let rows = indices.chunks_exact(self.index_depth).take(self.slices);
        for (row, out) in rows.zip(output.chunks_exact_mut(slice_bytes)) {
            let start = self
                .slice_start(row)
                .ok_or(KernelError::Shape(Self::OUT_OF_RANGE))?
                * self.elem_bytes;
            out.copy_from_slice(&input[start..start + slice_bytes]);
        }
        Ok(())
    }
}

impl KernelParams for GatherNd {
    const KERNEL: &'static str = "gather_nd";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_32, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        let sizes = [
            self.elem_bytes,
            self.slices,
            self.slice_len,
            self.input_len,
            self.index_depth,
        ];
        out.extend(sizes.iter().chain(&self.strides).map(|&v| v as u32));
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut values = [0usize; 5 + MAX_INDEX_DEPTH];
        for value in &mut values {
            *value = words.usize()?;
        }
        let mut strides = [0; MAX_INDEX_DEPTH];
        strides.copy_from_slice(&values[5..]);
        Self {
            elem_bytes: values[0],
            slices: values[1],
            slice_len: values[2],
            input_len: values[3],
            index_depth: values[4],
            strides,
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
    fn gathers_rows_and_elements() {
        // A [3, 2] input: rows by one index, elements by two.
        let input = [10u8, 11, 20, 21, 30, 31];
        let rows = GatherNd::new(1, &[3, 2], &[2, 1]).unwrap();
        let mut out = [0u8; 4];
        rows.run(&input, &[2, 0], &mut out).unwrap();
        assert_eq!(out, [30, 31, 10, 11]);
        let elements = GatherNd::new(1, &[3, 2], &[3, 2]).unwrap();
        let mut out = [0u8; 3];
        elements.run(&input, &[1, 1, 0, 0, 2, 1], &mut out).unwrap();
        assert_eq!(out, [21, 10, 31]);
        // TFLM checks the flat position only: (0, 3) is element 3.
        elements.run(&input, &[0, 3, 0, 0, 0, 0], &mut out).unwrap();
        assert_eq!(out[0], 21);
        assert!(elements.run(&input, &[3, 0, 0, 0, 0, 0], &mut out).is_err());
        assert!(elements
            .run(&input, &[0, -1, 0, 0, 0, 0], &mut out)
            .is_err());
    }

    #[test]
    fn words_round_trip_and_bad_words_are_refused() {
        let params = GatherNd::new(4, &[2, 3, 4], &[5, 2]).unwrap();
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 10);
        assert_eq!(GatherNd::decode(&mut Words::new(&words)).unwrap(), params);
        let mut bad = words.clone();
        bad[4] = 6;
        assert!(GatherNd::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words;
        bad[5] = 5;
        assert!(GatherNd::decode(&mut Words::new(&bad)).is_err());
        assert!(GatherNd::new(1, &[2], &[1, 2]).is_err());
    }
}
