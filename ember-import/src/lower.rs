//! Lowering a validated [`Graph`] to an Ember module: one function, `main`, whose arguments
//! are the model's inputs and whose results are its outputs; one dispatch per op, on the
//! kernel `ember-kernels` names for it; weights, biases and everything derivable at import
//! (per-channel multipliers and shifts) as constants, so none of it is computed or kept in
//! RAM at run time; every other tensor a transient of the function's arena. Pure views
//! (RESHAPE) alias their input and cost neither a step nor bytes.
//!
//! This file drives: it walks the graph and hands each op (or a pair the target fuses) to
//! its family's lowering through the registry, [`crate::ops`]; what the lowerings share is
//! in [`crate::lowering`].

use crate::element::ElementType;
use crate::graph::Graph;
use crate::lower_options::LowerOptions;
use crate::lowering::{LowerError, Lowering};
use crate::ops;
use crate::quantization::Quantization;
use crate::tensor::TensorId;
use hal_core::module::Built;

/// A model's input or output as a caller sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// The tensor's name in the model.
    pub name: String,
    /// Its element type.
    pub element_type: ElementType,
    /// Its shape (a dynamic batch pinned to 1).
    pub shape: Vec<usize>,
    /// Its quantization (scale and zero point per tensor), if any.
    pub quantization: Option<(f32, i64)>,
}

impl TensorInfo {
    /// Bytes of the tensor.
    pub fn byte_size(&self) -> usize {
        self.shape.iter().product::<usize>() * self.element_type.size()
    }
}

/// A lowered model: the module and what its function takes and gives.
#[derive(Debug, Clone)]
pub struct Lowered {
    /// The module file and its function's memory plan.
    pub built: Built,
    /// The function's arguments, in order.
    pub inputs: Vec<TensorInfo>,
    /// The function's results, in order.
    pub outputs: Vec<TensorInfo>,
    /// Bytes of constants (weights, biases, per-channel parameters) in the module.
    pub constant_bytes: u64,
}

impl Lowered {
    /// Bytes of the function's arena (every intermediate tensor, one `queue_alloca`).
    pub fn arena_bytes(&self) -> u64 {
        self.built.plans.first().map_or(0, |p| p.peak)
    }
}

/// Lowers `graph` to a module called `name`, laid out for the portable kernels
/// ([`LowerOptions::default`]).
pub fn lower(graph: &Graph<'_>, name: &str) -> Result<Lowered, LowerError> {
    lower_with(graph, name, LowerOptions::default())
}

/// Lowers `graph` to a module called `name`, laid out as `options` choose (for a target:
/// [`LowerOptions::for_target`]).
pub fn lower_with(
    graph: &Graph<'_>,
    name: &str,
    options: LowerOptions,
) -> Result<Lowered, LowerError> {
    let mut lowering = Lowering::new(graph, name, options, ops::supported_lowerings());
    let mut graph_ops = graph.ops().iter().peekable();
    while let Some(op) = graph_ops.next() {
        if let Some(next) = graph_ops.peek() {
            if ops::lower_pair(&mut lowering, op, next)? {
                graph_ops.next();
                continue;
            }
        }
        ops::lower_op(&mut lowering, op)?;
    }
    let (built, constant_bytes) = lowering.finish()?;
    let info = |id: &TensorId| {
        let tensor = graph.tensor(*id);
        TensorInfo {
            name: tensor.name.to_string(),
            element_type: tensor.element_type,
            shape: tensor.shape.clone(),
            quantization: match &tensor.quantization {
                Some(Quantization::PerTensor { scale, zero_point }) => Some((*scale, *zero_point)),
                _ => None,
            },
        }
    };
    Ok(Lowered {
        built,
        inputs: graph.inputs().iter().map(info).collect(),
        outputs: graph.outputs().iter().map(info).collect(),
        constant_bytes,
    })
}
