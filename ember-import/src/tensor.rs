//! Tensors: a value of the graph, with its static shape, type, quantization and, for a
//! constant, its bytes.

use crate::{ElementType, Quantization};
use std::fmt;

/// A tensor's index in [`Graph::tensors`](crate::Graph::tensors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TensorId(pub u32);

impl TensorId {
    /// The index as `usize`.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for TensorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// One tensor of the graph. `'a` is the model file's bytes: names and constant data borrow
/// from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor<'a> {
    /// The name in the file (may be empty).
    pub name: &'a str,
    /// The element type.
    pub element_type: ElementType,
    /// Static dimensions, each at least 1 (empty for a scalar).
    pub shape: Vec<usize>,
    /// The file declared dimension 0 dynamic (`shape_signature` -1); it is pinned to 1.
    pub dynamic_batch: bool,
    /// The quantization parameters, where the file gives a scale.
    pub quantization: Option<Quantization>,
    /// A constant's bytes, borrowed from the file: exactly [`Tensor::byte_size`] bytes,
    /// little-endian, row-major. `None` for activations, inputs and outputs.
    pub data: Option<&'a [u8]>,
}

impl Tensor<'_> {
    /// The number of elements (1 for a scalar).
    pub fn num_elements(&self) -> usize {
        // The importer checked that the product fits.
        self.shape.iter().product()
    }

    /// The number of bytes: elements × element size.
    pub fn byte_size(&self) -> usize {
        self.num_elements() * self.element_type.size()
    }

    /// True for a constant (its bytes are in the file).
    pub fn is_constant(&self) -> bool {
        self.data.is_some()
    }

    /// The rank (number of dimensions).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// A shape as `[1, 96, 96, 1]`.
pub struct ShapeDisplay<'s>(pub &'s [usize]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}
