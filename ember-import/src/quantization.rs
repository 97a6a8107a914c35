//! Affine quantization: `real = scale * (q - zero_point)`.

use std::fmt;

/// How a tensor's integer values map to real values.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantization {
    /// One scale and zero point for the whole tensor.
    PerTensor {
        /// Real value of one step; finite and positive.
        scale: f32,
        /// The integer that stands for 0.0; within the element type's range.
        zero_point: i64,
    },
    /// One scale and zero point per index along `axis` (per-channel weights and biases).
    PerChannel {
        /// One per index along `axis`; finite and positive.
        scales: Vec<f32>,
        /// As many as `scales`; within the element type's range.
        zero_points: Vec<i64>,
        /// The quantized dimension, within the tensor's rank, of size `scales.len()`.
        axis: usize,
    },
}

impl Quantization {
    /// The scales (one for per-tensor).
    pub fn scales(&self) -> &[f32] {
        match self {
            Self::PerTensor { scale, .. } => std::slice::from_ref(scale),
            Self::PerChannel { scales, .. } => scales,
        }
    }

    /// The zero points (one for per-tensor).
    pub fn zero_points(&self) -> &[i64] {
        match self {
            Self::PerTensor { zero_point, .. } => std::slice::from_ref(zero_point),
            Self::PerChannel { zero_points, .. } => zero_points,
        }
    }

    /// The per-channel axis, `None` for per-tensor.
    pub fn axis(&self) -> Option<usize> {
        match self {
            Self::PerTensor { .. } => None,
            Self::PerChannel { axis, .. } => Some(*axis),
        }
    }
}

impl fmt::Display for Quantization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PerTensor { scale, zero_point } => write!(f, "scale {scale:e} zp {zero_point}"),
            Self::PerChannel { scales, axis, .. } => {
                write!(f, "per-channel ×{} on axis {axis}", scales.len())
            }
        }
    }
}
