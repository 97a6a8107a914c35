#![doc = include_str!("../README.md")]

mod builtin_names;
mod device_model;
mod element;
mod error;
mod graph;
mod lower;
mod lower_ops;
mod lower_options;
mod lower_separable;
mod op;
mod plan;
mod quantization;
mod read;
mod rules;
mod run;
mod tensor;
pub mod tflite;

pub use device_model::DeviceModel;
pub use element::ElementType;
pub use error::{ImportError, OpSite, PlanError, TensorSite};
pub use graph::Graph;
pub use lower::{lower, lower_with, LowerError, Lowered, TensorInfo, FUNCTION};
pub use lower_options::LowerOptions;
pub use op::{
    Activation, Conv2dOptions, DepthwiseConv2dOptions, FullyConnectedOptions, Hw, Op, OpKind,
    OptionsDisplay, Padding, Pool2dOptions, StridedSliceOptions,
};
pub use plan::{MemoryPlan, Placement, PlannedBuffer, DEFAULT_ALIGNMENT};
pub use quantization::Quantization;
pub use run::{run_local, run_local_cases, LocalModel, RunOutput};
pub use tensor::{ShapeDisplay, Tensor, TensorId};

/// Parses and validates a `.tflite` file: [`Graph::parse`].
pub fn parse(bytes: &[u8]) -> Result<Graph<'_>, ImportError> {
    Graph::parse(bytes)
}
