#![doc = include_str!("../README.md")]

mod builtin_names;
mod check;
mod element;
mod error;
mod flexbuffer_map;
mod graph;
mod lower;
mod lower_options;
mod lowering;
mod op;
mod ops;
mod plan;
mod quantization;
mod read;
mod tensor;
pub mod tflite;

pub use element::ElementType;
pub use error::{ImportError, OpSite, PlanError, Refusals, TensorSite};
pub use graph::Graph;
pub use lower::{lower, lower_with, Lowered, TensorInfo};
pub use lower_options::LowerOptions;
pub use lowering::{LowerError, FUNCTION};
pub use op::{
    Activation, BinaryOp, Conv2dOptions, DepthwiseConv2dOptions, DetectionPostprocessOptions,
    ElementwiseOp, FullyConnectedOptions, Hw, Op, OpKind, OptionsDisplay, Padding, Pool2dOptions,
    ReduceOp, StridedSliceOptions,
};
pub use ops::supported_operators;
pub use plan::{MemoryPlan, Placement, PlannedBuffer, DEFAULT_ALIGNMENT};
pub use quantization::Quantization;
pub use tensor::{ShapeDisplay, Tensor, TensorId};

/// Parses and validates a `.tflite` file: [`Graph::parse`].
pub fn parse(bytes: &[u8]) -> Result<Graph<'_>, ImportError> {
    Graph::parse(bytes)
}
