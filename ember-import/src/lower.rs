//! Lowering a validated [`Graph`] to an Ember module: one function, `main`, whose arguments
//! are the model's inputs and whose results are its outputs; one dispatch per op, on the
//! kernel `ember-kernels` names for it; weights, biases and everything derivable at import
//! (per-channel multipliers and shifts) as constants, so none of it is computed or kept in
//! RAM at run time; every other tensor a transient of the function's arena. Pure views
//! (RESHAPE) alias their input and cost neither a step nor bytes.

use crate::element::ElementType;
use crate::error::OpSite;
use crate::graph::Graph;
use crate::lower_options::LowerOptions;
use crate::op::{Op, OpKind};
use crate::quantization::Quantization;
use crate::tensor::TensorId;
use hal_core::module::{
    Built, Element, FunctionId, ModuleBuilder, ModuleError, Operand, TensorSpec,
};
use std::collections::HashMap;

/// The function every lowered model has.
pub const FUNCTION: &str = "main";

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

/// Why a graph could not be lowered.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// An op (or an op with these types or options) Ember has no kernel for.
    #[error("{site}: {what} is not supported (supported ops: {supported})")]
    Unsupported {
        /// The op.
        site: OpSite,
        /// What about it.
        what: String,
        /// What is supported.
        supported: &'static str,
    },
    /// Parameters no kernel can take (shapes, quantization).
    #[error("{site}: {problem}")]
    Invalid {
        /// The op.
        site: OpSite,
        /// What is wrong.
        problem: String,
    },
    /// The module failed its own validation.
    #[error("the lowered module is invalid: {0}")]
    Module(#[from] ModuleError),
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
    let mut lowering = Lowering::new(graph, name, options);
    let mut ops = graph.ops().iter().peekable();
    while let Some(op) = ops.next() {
        if let (true, Some(next)) = (options.fuse_separable, ops.peek()) {
            if crate::lower_separable::lower_separable(&mut lowering, op, next)? {
                ops.next();
                continue;
            }
        }
        lowering.op(op)?;
    }
    lowering.finish()
}

/// The state of one lowering: the builder and where each tensor lives.
pub(crate) struct Lowering<'g, 'a> {
    pub(crate) graph: &'g Graph<'a>,
    pub(crate) builder: ModuleBuilder,
    pub(crate) function: FunctionId,
    /// The target's layout choices.
    pub(crate) options: LowerOptions,
    values: HashMap<TensorId, Operand>,
    executables: HashMap<&'static str, u32>,
    constant_bytes: u64,
    /// Whether a step (dispatch or copy) was appended: every later one follows a barrier.
    stepped: bool,
}

impl<'g, 'a> Lowering<'g, 'a> {
    fn new(graph: &'g Graph<'a>, name: &str, options: LowerOptions) -> Self {
        let mut builder = ModuleBuilder::new(name);
        // TFLM's alignment, enough for the local driver's bindings.
        builder.transient_alignment(16);
        let size = |t: &TensorId| graph.tensor(*t).byte_size() as u64;
        let arguments: Vec<u64> = graph.inputs().iter().map(size).collect();
        let results: Vec<u64> = graph.outputs().iter().map(size).collect();
        let function = builder.function(FUNCTION, &arguments, &results);
        let mut values = HashMap::new();
        for (n, t) in graph.inputs().iter().enumerate() {
            values.insert(*t, builder.argument(function, n as u32));
        }
        for (n, t) in graph.outputs().iter().enumerate() {
            values
                .entry(*t)
                .or_insert(builder.result(function, n as u32));
        }
        Self {
            graph,
            builder,
            function,
            options,
            values,
            executables: HashMap::new(),
            constant_bytes: 0,
            stepped: false,
        }
    }

    /// Where `tensor` lives: an argument, a result, a constant (added on first use) or a
    /// transient (made on first use, by the op that writes it).
    pub(crate) fn operand(&mut self, tensor: TensorId) -> Operand {
        if let Some(operand) = self.values.get(&tensor) {
            return *operand;
        }
        let t = self.graph.tensor(tensor);
        let operand = match t.data {
            Some(bytes) => self.constant(t.name, bytes),
            None => self
                .builder
                .transient(self.function, t.byte_size().max(1) as u64),
        };
        self.values.insert(tensor, operand);
        operand
    }

    /// A constant of `bytes` (weights as they are, or parameters derived at import).
    pub(crate) fn constant(&mut self, name: &str, bytes: &[u8]) -> Operand {
        self.constant_bytes += bytes.len() as u64;
        self.builder.constant(name, bytes)
    }

    /// A barrier before every step but the first: each op reads what earlier ops wrote, or
    /// reuses arena bytes they read, and a device that overlaps dispatches (a GPU) must
    /// finish one before the next starts. None for [`LowerOptions::in_order`] modules.
    fn before_step(&mut self) {
        if self.stepped && !self.options.in_order {
            self.builder.barrier(self.function);
        }
        self.stepped = true;
    }

    /// Appends a dispatch of `kernel` with parameter `words` over `bindings`.
    pub(crate) fn dispatch(&mut self, kernel: &'static str, words: &[u32], bindings: &[Operand]) {
        self.before_step();
        let builder = &mut self.builder;
        let executable = *self
            .executables
            .entry(kernel)
            .or_insert_with(|| builder.executable(kernel));
        self.builder
            .dispatch(self.function, executable, [1, 1, 1], words, bindings);
    }

    /// Lowers one op.
    fn op(&mut self, op: &Op) -> Result<(), LowerError> {
        match &op.kind {
            OpKind::Reshape => {
                let input = self.input(op, 0)?;
                let source = self.operand(input);
                let output = op.outputs[0];
                match self.values.get(&output) {
                    // A model output that is a view: its bytes are copied into the result.
                    Some(&result) => {
                        self.before_step();
                        self.builder.copy(self.function, source, result);
                    }
                    None => {
                        self.values.insert(output, source);
                    }
                }
                Ok(())
            }
            _ => crate::lower_ops::lower_op(self, op),
        }
    }

    /// Input `n` of `op` (present: optional inputs are read with `op.inputs` directly).
    pub(crate) fn input(&self, op: &Op, n: usize) -> Result<TensorId, LowerError> {
        op.inputs
            .get(n)
            .copied()
            .flatten()
            .ok_or_else(|| self.invalid(op, format!("input {n} is missing")))
    }

    /// An error naming `op`.
    pub(crate) fn invalid(&self, op: &Op, problem: String) -> LowerError {
        LowerError::Invalid {
            site: site(op),
            problem,
        }
    }

    fn finish(mut self) -> Result<Lowered, LowerError> {
        // The module describes the function's tensors too, for firmware that quantizes.
        let spec = |t: &TensorId| -> Option<TensorSpec> {
            let tensor = self.graph.tensor(*t);
            let element = match tensor.element_type {
                ElementType::Float32 => Element::F32,
                ElementType::Float16 => Element::F16,
                ElementType::Int8 => Element::I8,
                ElementType::Uint8 => Element::U8,
                ElementType::Int16 => Element::I16,
                ElementType::Int32 => Element::I32,
                ElementType::Int64 => Element::I64,
            };
            let (scale, zero_point) = match &tensor.quantization {
                Some(Quantization::PerTensor { scale, zero_point }) => (*scale, *zero_point as i32),
                _ => (0.0, 0),
            };
            Some(TensorSpec {
                name: tensor.name.to_string(),
                element,
                shape: tensor
                    .shape
                    .iter()
                    .map(|&d| u32::try_from(d).ok())
                    .collect::<Option<Vec<u32>>>()?,
                scale,
                zero_point,
            })
        };
        let inputs: Option<Vec<TensorSpec>> = self.graph.inputs().iter().map(spec).collect();
        let outputs: Option<Vec<TensorSpec>> = self.graph.outputs().iter().map(spec).collect();
        if let (Some(inputs), Some(outputs)) = (inputs, outputs) {
            self.builder.describe(self.function, &inputs, &outputs);
        }
        let info = |t: &TensorId| {
            let tensor = self.graph.tensor(*t);
            TensorInfo {
                name: tensor.name.to_string(),
                element_type: tensor.element_type,
                shape: tensor.shape.clone(),
                quantization: match &tensor.quantization {
                    Some(Quantization::PerTensor { scale, zero_point }) => {
                        Some((*scale, *zero_point))
                    }
                    _ => None,
                },
            }
        };
        Ok(Lowered {
            built: self.builder.finish()?,
            inputs: self.graph.inputs().iter().map(info).collect(),
            outputs: self.graph.outputs().iter().map(info).collect(),
            constant_bytes: self.constant_bytes,
        })
    }
}

/// The site of `op` for errors.
pub(crate) fn site(op: &Op) -> OpSite {
    OpSite {
        index: op.index,
        name: op.kind.name().to_string(),
    }
}

/// Per-tensor quantization of `tensor`, or an error naming `op`.
pub(crate) fn per_tensor(
    lowering: &Lowering<'_, '_>,
    op: &Op,
    tensor: TensorId,
) -> Result<(f32, i32), LowerError> {
    match &lowering.graph.tensor(tensor).quantization {
        Some(Quantization::PerTensor { scale, zero_point }) => Ok((*scale, *zero_point as i32)),
        Some(Quantization::PerChannel {
            scales,
            zero_points,
            ..
        }) if scales.len() == 1 && zero_points.len() == 1 => Ok((scales[0], zero_points[0] as i32)),
        _ => Err(lowering.invalid(
            op,
            format!(
                "tensor {} `{}` needs per-tensor quantization",
                tensor.0,
                lowering.graph.tensor(tensor).name
            ),
        )),
    }
}
