//! Element types: what one value of a tensor is.

use crate::tflite;
use std::fmt;

/// The element type of a tensor. The importer accepts these; any other TFLite type (string,
/// bool, complex, 4-bit, …) is refused with [`ImportError::UnsupportedType`].
///
/// [`ImportError::UnsupportedType`]: crate::ImportError::UnsupportedType
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// IEEE 754 single precision.
    Float32,
    /// IEEE 754 half precision (weights that DEQUANTIZE widens to float32).
    Float16,
    /// Signed 8-bit: quantized activations and weights.
    Int8,
    /// Unsigned 8-bit: legacy asymmetric quantization.
    Uint8,
    /// Signed 16-bit: 16x8 quantized activations.
    Int16,
    /// Signed 32-bit: biases of int8 models, shapes, axes, paddings.
    Int32,
    /// Signed 64-bit: biases of 16x8 models, paddings and slice bounds.
    Int64,
    /// Boolean, one byte (0 or 1): what comparisons give and SELECT_V2 and the logical
    /// ops take.
    Bool,
}

impl ElementType {
    /// Every accepted type, as in error messages.
    pub const SUPPORTED: &'static str = "float32, float16, int8, uint8, int16, int32, int64, bool";

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Self::Int8 | Self::Uint8 | Self::Bool => 1,
            Self::Float16 | Self::Int16 => 2,
            Self::Float32 | Self::Int32 => 4,
            Self::Int64 => 8,
        }
    }

    /// The lowercase name (`int8`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Float32 => "float32",
            Self::Float16 => "float16",
            Self::Int8 => "int8",
            Self::Uint8 => "uint8",
            Self::Int16 => "int16",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::Bool => "bool",
        }
    }

    /// True for the types that carry quantized real values (int8, uint8, int16).
    pub const fn is_quantized_integer(self) -> bool {
        matches!(self, Self::Int8 | Self::Uint8 | Self::Int16)
    }

    /// The range a zero point of this type must lie in, where it has one.
    pub(crate) const fn zero_point_range(self) -> Option<(i64, i64)> {
        match self {
            Self::Int8 => Some((i8::MIN as i64, i8::MAX as i64)),
            Self::Uint8 => Some((0, u8::MAX as i64)),
            Self::Int16 => Some((i16::MIN as i64, i16::MAX as i64)),
            Self::Int32 => Some((i32::MIN as i64, i32::MAX as i64)),
            Self::Int64 => Some((i64::MIN, i64::MAX)),
            Self::Float32 | Self::Float16 | Self::Bool => None,
        }
    }

    /// The schema's type, if the importer accepts it.
    pub(crate) fn from_tflite(ty: tflite::TensorType) -> Option<Self> {
        Some(match ty {
            tflite::TensorType::Float32 => Self::Float32,
            tflite::TensorType::Float16 => Self::Float16,
            tflite::TensorType::Int8 => Self::Int8,
            tflite::TensorType::Uint8 => Self::Uint8,
            tflite::TensorType::Int16 => Self::Int16,
            tflite::TensorType::Int32 => Self::Int32,
            tflite::TensorType::Int64 => Self::Int64,
            tflite::TensorType::Bool => Self::Bool,
            _ => return None,
        })
    }

    /// The schema's value for this type.
    pub(crate) fn to_tflite(self) -> tflite::TensorType {
        match self {
            Self::Float32 => tflite::TensorType::Float32,
            Self::Float16 => tflite::TensorType::Float16,
            Self::Int8 => tflite::TensorType::Int8,
            Self::Uint8 => tflite::TensorType::Uint8,
            Self::Int16 => tflite::TensorType::Int16,
            Self::Int32 => tflite::TensorType::Int32,
            Self::Int64 => tflite::TensorType::Int64,
            Self::Bool => tflite::TensorType::Bool,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
