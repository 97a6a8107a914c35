//! SELECT_V2, as TFLM's `select.cc` runs it: `condition ? x : y` element by element, the
//! three inputs broadcast together (`BroadcastSelect5DSlow`; up to six dimensions here) to
//! the output's shape. With a one-byte `true` condition it broadcasts x alone: FILL,
//! ZEROS_LIKE, BROADCAST_TO and SHAPE lower to it.
//! The values are moved as they are, so one kernel serves every element size: int8 and
//! int16 (quantization plays no part; TFLM checks none) and float32. A condition byte other
//! than 0 reads as true.
//!
//! Bindings of `select`: 0 condition (bool bytes), 1 x, 2 y, 3 output (elements of
//! `element_bytes` each), sized by the [`SelectShape`].

use crate::broadcast::MAX_RANK;
use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The three inputs' and the output's shapes, right-aligned and extended to [`MAX_RANK`]
/// with leading 1s. Each input dimension is 1 or the output's. Encoded as 24 words: the
/// condition's six dimensions, then x's, y's and the output's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectShape {
    /// The condition's, x's and y's dimensions, outermost first.
    pub inputs: [[usize; MAX_RANK]; 3],
    /// The output's dimensions, outermost first.
    pub output: [usize; MAX_RANK],
}

impl SelectShape {
    /// The shape from the three inputs' and the output's TFLite shapes (rank up to
    /// [`MAX_RANK`]); refuses inputs that do not broadcast to the output and sizes that
    /// overflow.
    pub fn new(
        condition: &[usize],
        x: &[usize],
        y: &[usize],
        output: &[usize],
    ) -> Result<Self, KernelError> {
        let extend = |dims: &[usize]| -> Result<[usize; MAX_RANK], KernelError> {
            let pad = MAX_RANK
                .checked_sub(dims.len())
                .ok_or(KernelError::Shape("select: rank above 6"))?;
            let mut out = [1; MAX_RANK];
            out[pad..].copy_from_slice(dims);
            Ok(out)
        };
        Self {
            inputs: [extend(condition)?, extend(x)?, extend(y)?],
            output: extend(output)?,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        let output = self.output;
        for input in &self.inputs {
            for (&dim, &out) in input.iter().zip(&output) {
                if dim == 0 || dim > shape::MAX_DIM {
                    return Err(KernelError::Shape(
                        "select: a dimension zero or above i32::MAX",
                    ));
                }
                if dim != out && dim != 1 {
                    return Err(KernelError::Shape("select: shapes do not broadcast"));
                }
            }
            shape::product(input)?;
        }
        shape::product(&output)?;
        Ok(self)
    }

    /// Elements of the output.
    pub fn len(&self) -> usize {
        self.output.iter().product()
    }

    /// Whether the output has no elements (never, for decoded parameters).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The indices into the condition, x and y of output element `e`.
    pub fn input_indices(&self, e: usize) -> [usize; 3] {
        let output = self.output;
        let mut rest = e;
        let mut indices = [0usize; 3];
        let mut strides = [1usize; 3];
        for dim in (0..MAX_RANK).rev() {
            let index = rest % output[dim];
            rest /= output[dim];
            for ((input, at), stride) in self.inputs.iter().zip(&mut indices).zip(&mut strides) {
                if input[dim] != 1 {
                    *at += index * *stride;
                }
                *stride *= input[dim];
            }
        }
        indices
    }
}

/// `select`. Words: the [`SelectShape`]'s 24, `element_bytes` (1, 2 or 4). `decode`
/// refuses other sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Select {
    /// The inputs' shapes.
    pub shape: SelectShape,
    /// Bytes per x, y and output element.
    pub element_bytes: usize,
}

impl Select {
    /// These parameters, if `decode` would take them.
    pub fn validate(self) -> Result<Self, KernelError> {
        if ![1, 2, 4].contains(&self.element_bytes) {
            return Err(KernelError::Shape(
                "select: elements not of 1, 2 or 4 bytes",
            ));
        }
        self.shape.validate()?;
        Ok(self)
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let count = |dims: &[usize; MAX_RANK]| dims.iter().product::<usize>();
        let [condition, x, y] = &self.shape.inputs;
        need(binding_lens, 0, count(condition), 1)?;
        need(binding_lens, 1, count(x), self.element_bytes)?;
        need(binding_lens, 2, count(y), self.element_bytes)?;
        need(binding_lens, 3, self.shape.len(), self.element_bytes)
    }

    /// Runs the kernel.
    pub fn run(
        &self,
        condition: &[u8],
        x: &[u8],
        y: &[u8],
        output: &mut [u8],
    ) -> Result<(), KernelError> {
        self.check(&[condition.len(), x.len(), y.len(), output.len()])?;
        let size = self.element_bytes;
        for (e, out) in output
            .chunks_exact_mut(size)
            .take(self.shape.len())
            .enumerate()
        {
            let [at_condition, at_x, at_y] = self.shape.input_indices(e);
            let (from, at) = if condition[at_condition] != 0 {
                (x, at_x)
            } else {
                (y, at_y)
            };
            out.copy_from_slice(&from[at * size..at * size + size]);
        }
        Ok(())
    }
}

impl KernelParams for Select {
    const KERNEL: &'static str = "select";
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::READ_8,
        BindingUse::READ_8,
        BindingUse::READ_8,
        BindingUse::WRITE_8,
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        let dims = self.shape.inputs.iter().flatten().chain(&self.shape.output);
        out.extend(dims.map(|&dim| dim as u32));
        out.extend([self.element_bytes as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut inputs = [[0usize; MAX_RANK]; 3];
        let mut output = [0usize; MAX_RANK];
        for dim in inputs.iter_mut().flatten().chain(output.iter_mut()) {
            *dim = words.usize()?;
        }
        Self {
            shape: SelectShape { inputs, output },
            element_bytes: words.usize()?,
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
    fn selects_with_three_way_broadcasting() {
        // condition [2, 1], x [1, 3], y [3]: output [2, 3].
        let shape = SelectShape::new(&[2, 1], &[1, 3], &[3], &[2, 3]).unwrap();
        let params = Select {
            shape,
            element_bytes: 2,
        };
        let x: Vec<u8> = [1i16, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let y: Vec<u8> = [-1i16, -2, -3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut out = [0u8; 12];
        params.run(&[1, 0], &x, &y, &mut out).unwrap();
        let got: Vec<i16> = out
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(got, [1, 2, 3, -1, -2, -3]);
        assert!(SelectShape::new(&[2], &[3], &[1], &[3]).is_err());
        // A `true` condition fills the output from one value.
        let fill = Select {
            shape: SelectShape::new(&[1], &[1], &[1], &[2, 2]).unwrap(),
            element_bytes: 1,
        };
        let mut out = [0u8; 4];
        fill.run(&[1], &[7], &[7], &mut out).unwrap();
        assert_eq!(out, [7; 4]);
    }

    #[test]
    fn words_round_trip_and_bad_sizes_are_refused() {
        let params = Select {
            shape: SelectShape::new(&[4], &[3, 4], &[1], &[3, 4]).unwrap(),
            element_bytes: 4,
        };
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 25);
        assert_eq!(Select::decode(&mut Words::new(&words)).unwrap(), params);
        words[24] = 3;
        assert!(Select::decode(&mut Words::new(&words)).is_err());
    }
}
