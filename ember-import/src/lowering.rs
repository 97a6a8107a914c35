//! What every op's lowering shares: the [`Lowering`] under way (the module builder, where
//! each tensor lives, the barriers between steps), [`LowerError`], and the helpers more than
//! one op family uses (quantization parameters, folded biases, requantization constants,
//! TFLM's padding window, the kernels' activations).

use crate::element::ElementType;
use crate::error::OpSite;
use crate::graph::Graph;
use crate::lower_options::LowerOptions;
use crate::op::{Activation, Hw, Op, Padding};
use crate::quantization::Quantization;
use crate::tensor::TensorId;
use ember_kernels::activation::Activation as KernelActivation;
use ember_kernels::conv2d::per_channel_multipliers;
use ember_kernels::padding::{compute_padding_height_width, Padding as KernelPadding, Window};
use ember_kernels::{KernelError, KernelParams};
use hal_core::contract::{BindingFacts, Contract};
use hal_core::module::{
    Built, Element, FunctionId, ModuleBuilder, ModuleError, Operand, TensorSpec,
};
use std::collections::HashMap;

/// The function every lowered model has.
pub const FUNCTION: &str = "main";

/// Lowers one op: its kernel, its parameters and its bindings (an op family's, in the
/// registry, `crate::ops`).
pub(crate) type LowerFn = fn(&mut Lowering<'_, '_>, &Op) -> Result<(), LowerError>;

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

/// The state of one lowering: the builder and where each tensor lives.
pub(crate) struct Lowering<'g, 'a> {
    pub(crate) graph: &'g Graph<'a>,
    pub(crate) builder: ModuleBuilder,
    pub(crate) function: FunctionId,
    /// The target's layout choices.
    pub(crate) options: LowerOptions,
    /// The supported ops, as [`LowerError::Unsupported`] lists them.
    supported: &'static str,
    values: HashMap<TensorId, Operand>,
    executables: HashMap<&'static str, u32>,
    constant_bytes: u64,
    /// Whether a step (dispatch or copy) was appended: every later one follows a barrier.
    stepped: bool,
}

impl<'g, 'a> Lowering<'g, 'a> {
    /// A lowering of `graph` to a module called `name`, with one function, [`FUNCTION`],
    /// whose arguments are the graph's inputs and whose results are its outputs;
    /// `supported` is the list its [`LowerError::Unsupported`] errors print.
    pub(crate) fn new(
        graph: &'g Graph<'a>,
        name: &str,
        options: LowerOptions,
        supported: &'static str,
    ) -> Self {
        let mut builder = ModuleBuilder::new(name);
        // TFLM's alignment, enough for the local driver's bindings.
        builder.transient_alignment(16);
        let size = |tensor: &TensorId| graph.tensor(*tensor).byte_size() as u64;
        let arguments: Vec<u64> = graph.inputs().iter().map(size).collect();
        let results: Vec<u64> = graph.outputs().iter().map(size).collect();
        let function = builder.function(FUNCTION, &arguments, &results);
        let mut values = HashMap::new();
        for (slot, tensor) in graph.inputs().iter().enumerate() {
            values.insert(*tensor, builder.argument(function, slot as u32));
        }
        for (slot, tensor) in graph.outputs().iter().enumerate() {
            values
                .entry(*tensor)
                .or_insert(builder.result(function, slot as u32));
        }
        Self {
            graph,
            builder,
            function,
            options,
            supported,
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
        let info = self.graph.tensor(tensor);
        let operand = match info.data {
            Some(bytes) => self.constant(info.name, bytes),
            None => self
                .builder
                .transient(self.function, info.byte_size().max(1) as u64),
        };
        self.values.insert(tensor, operand);
        operand
    }

    /// `output` as a view of `source` (RESHAPE): the same bytes, no step, unless `output`
    /// is a model output, whose bytes are then copied into its result.
    pub(crate) fn view(&mut self, output: TensorId, source: Operand) {
        match self.values.get(&output) {
            Some(&result) => {
                self.before_step();
                self.builder.copy(self.function, source, result);
            }
            None => {
                self.values.insert(output, source);
            }
        }
    }

    /// A constant of `bytes` (weights as they are, or parameters derived at import).
    pub(crate) fn constant(&mut self, name: &str, bytes: &[u8]) -> Operand {
        self.constant_bytes += bytes.len() as u64;
        self.builder.constant(name, bytes)
    }

    /// A constant of `values` as little-endian `i32`s.
    pub(crate) fn i32_constant(&mut self, name: &str, values: &[i32]) -> Operand {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.constant(name, &bytes)
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
        self.dispatch_on(kernel, [1, 1, 1], words, bindings);
    }

    /// [`dispatch`](Self::dispatch) on `grid` (the built-in kernels split their work over
    /// the dispatch's workgroups; the op set's ignore it).
    fn dispatch_on(
        &mut self,
        kernel: &'static str,
        grid: [u32; 3],
        words: &[u32],
        bindings: &[Operand],
    ) {
        self.before_step();
        let builder = &mut self.builder;
        let executable = *self
            .executables
            .entry(kernel)
            .or_insert_with(|| builder.executable(kernel));
        self.builder
            .dispatch(self.function, executable, grid, words, bindings);
    }

    /// A dispatch of the built-in kernel `contract` declares, with push constants `words`
    /// over the operands of `tensors`, on `groups` workgroups; checked against the contract
    /// first, each tensor's bytes as its binding, so the importer refuses what the kernel
    /// would.
    pub(crate) fn dispatch_builtin(
        &mut self,
        op: &Op,
        contract: &'static Contract,
        groups: u32,
        words: &[u32],
        tensors: &[TensorId],
    ) -> Result<(), LowerError> {
        let facts: Vec<BindingFacts> = tensors
            .iter()
            .map(|&t| BindingFacts {
                offset: 0,
                len: self.graph.tensor(t).byte_size() as u64,
                writable: true,
            })
            .collect();
        contract.check(words, &facts).map_err(kernel_error(op))?;
        let operands: Vec<_> = tensors.iter().map(|tensor| self.operand(*tensor)).collect();
        self.dispatch_on(contract.name, [groups, 1, 1], words, &operands);
        Ok(())
    }

    /// A dispatch of `params`' kernel over the operands of `tensors`.
    pub(crate) fn dispatch_params<P: KernelParams>(&mut self, params: &P, tensors: &[TensorId]) {
        self.dispatch_params_on(params, tensors, 1);
    }

    /// [`dispatch_params`](Self::dispatch_params) on `groups` workgroups, for a built-in
    /// kernel given an op's parameters (`add_f32` with `AddF32`'s words, `mul_f32` with
    /// `MulF32`'s), which splits its work over the dispatch's workgroups.
    pub(crate) fn dispatch_params_on<P: KernelParams>(
        &mut self,
        params: &P,
        tensors: &[TensorId],
        groups: u32,
    ) {
        let mut words = Vec::new();
        params.encode(&mut words);
        let operands: Vec<_> = tensors.iter().map(|tensor| self.operand(*tensor)).collect();
        self.dispatch_on(P::KERNEL, [groups, 1, 1], &words, &operands);
    }

    /// Workgroups for a built-in kernel over `items` rows or elements: one per 64 (a GPU
    /// workgroup's lanes each take one), at least 1, at most
    /// [`MAX_WORKGROUP_COUNT`](hal_core::command::MAX_WORKGROUP_COUNT).
    pub(crate) fn groups_for(items: usize) -> u32 {
        let groups = items.div_ceil(64).max(1);
        u32::try_from(groups)
            .unwrap_or(u32::MAX)
            .min(hal_core::command::MAX_WORKGROUP_COUNT)
    }

    /// Input `slot` of `op` (present: optional inputs are read with `op.inputs` directly).
    pub(crate) fn input(&self, op: &Op, slot: usize) -> Result<TensorId, LowerError> {
        op.inputs
            .get(slot)
            .copied()
            .flatten()
            .ok_or_else(|| self.invalid(op, format!("input {slot} is missing")))
    }

    /// The element type of `tensor`.
    pub(crate) fn element_type(&self, tensor: TensorId) -> ElementType {
        self.graph.tensor(tensor).element_type
    }

    /// An error naming `op`.
    pub(crate) fn invalid(&self, op: &Op, problem: String) -> LowerError {
        LowerError::Invalid {
            site: site(op),
            problem,
        }
    }

    /// `what` about `op` has no kernel.
    pub(crate) fn unsupported(&self, op: &Op, what: String) -> LowerError {
        LowerError::Unsupported {
            site: site(op),
            what,
            supported: self.supported,
        }
    }

    /// Per-tensor quantization of `tensor` (scale, zero point), or an error naming `op`.
    pub(crate) fn per_tensor(&self, op: &Op, tensor: TensorId) -> Result<(f32, i32), LowerError> {
        match &self.graph.tensor(tensor).quantization {
            Some(Quantization::PerTensor { scale, zero_point }) => Ok((*scale, *zero_point as i32)),
            Some(Quantization::PerChannel {
                scales,
                zero_points,
                ..
            }) if scales.len() == 1 && zero_points.len() == 1 => {
                Ok((scales[0], zero_points[0] as i32))
            }
            _ => Err(self.invalid(
                op,
                format!(
                    "tensor {} `{}` needs per-tensor quantization",
                    tensor.0,
                    self.graph.tensor(tensor).name
                ),
            )),
        }
    }

    /// The bias of an int8 weighted op with the input zero point folded in, so the kernel's
    /// inner loop multiplies raw int8 values: `bias[c] + input_offset * Σ (w +
    /// filter_offset)` over output channel `c`'s weights, in the wrapping int32 arithmetic
    /// the kernels accumulate in (the same sum, reordered). `None` where there is nothing to
    /// fold (a zero input offset) or the weights or bias are not constants the importer can
    /// read.
    pub(crate) fn folded_bias(
        &self,
        weights: TensorId,
        bias: Option<TensorId>,
        channels: usize,
        input_offset: i32,
        filter_offset: i32,
    ) -> Option<Vec<i32>> {
        if input_offset == 0 || channels == 0 {
            return None;
        }
        let weight_bytes = self.graph.tensor(weights).data?;
        if weight_bytes.len() % channels != 0 {
            return None;
        }
        let mut folded = match bias {
            None => vec![0i32; channels],
            Some(bias) => int32_constant_values(self.graph, bias, channels)?,
        };
        let rows = weight_bytes.chunks_exact(weight_bytes.len() / channels);
        for (sum, row) in folded.iter_mut().zip(rows) {
            let weights: i32 = row.iter().fold(0i32, |acc, &v| {
                acc.wrapping_add(i32::from(v as i8).wrapping_add(filter_offset))
            });
            *sum = sum.wrapping_add(input_offset.wrapping_mul(weights));
        }
        Some(folded)
    }

    /// Per-channel (or per-tensor) multipliers and shifts of a weighted int8 op with
    /// `channels` outputs.
    pub(crate) fn channel_requantization(
        &self,
        op: &Op,
        input: TensorId,
        weights: TensorId,
        output: TensorId,
        channels: usize,
    ) -> Result<(Vec<i32>, Vec<i32>), LowerError> {
        let (input_scale, _) = self.per_tensor(op, input)?;
        let (output_scale, _) = self.per_tensor(op, output)?;
        let scales: Vec<f32> = match &self.graph.tensor(weights).quantization {
            Some(quantization) => quantization.scales().to_vec(),
            None => return Err(self.invalid(op, "int8 weights without quantization".into())),
        };
        let mut multipliers = vec![0i32; channels];
        let mut shifts = vec![0i32; channels];
        per_channel_multipliers(
            input_scale,
            &scales,
            output_scale,
            &mut multipliers,
            &mut shifts,
        )
        .map_err(|e| self.invalid(op, e.to_string()))?;
        Ok((multipliers, shifts))
    }

    /// [`Lowering::channel_requantization`] as two constants, `op<N>.multipliers` and
    /// `op<N>.shifts`.
    pub(crate) fn requantization_constants(
        &mut self,
        op: &Op,
        input: TensorId,
        weights: TensorId,
        output: TensorId,
        channels: usize,
    ) -> Result<(Operand, Operand), LowerError> {
        let (multipliers, shifts) =
            self.channel_requantization(op, input, weights, output, channels)?;
        let name = format!("op{}", op.index);
        Ok((
            self.i32_constant(&format!("{name}.multipliers"), &multipliers),
            self.i32_constant(&format!("{name}.shifts"), &shifts),
        ))
    }

    /// Describes the function's tensors (for firmware that quantizes) and builds the
    /// module: the module and its bytes of constants.
    pub(crate) fn finish(mut self) -> Result<(Built, u64), LowerError> {
        let graph = self.graph;
        let spec = |id: &TensorId| -> Option<TensorSpec> {
            let tensor = graph.tensor(*id);
            let element = match tensor.element_type {
                ElementType::Float32 => Element::F32,
                ElementType::Float16 => Element::F16,
                ElementType::Int8 => Element::I8,
                ElementType::Uint8 => Element::U8,
                ElementType::Int16 => Element::I16,
                ElementType::Int32 => Element::I32,
                ElementType::Int64 => Element::I64,
                ElementType::Bool => Element::Bool,
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
                    .map(|&dim| u32::try_from(dim).ok())
                    .collect::<Option<Vec<u32>>>()?,
                scale,
                zero_point,
            })
        };
        let inputs: Option<Vec<TensorSpec>> = graph.inputs().iter().map(spec).collect();
        let outputs: Option<Vec<TensorSpec>> = graph.outputs().iter().map(spec).collect();
        if let (Some(inputs), Some(outputs)) = (inputs, outputs) {
            self.builder.describe(self.function, &inputs, &outputs);
        }
        Ok((self.builder.finish()?, self.constant_bytes))
    }
}

/// The site of `op` for errors.
pub(crate) fn site(op: &Op) -> OpSite {
    OpSite {
        index: op.index,
        name: op.kind.name().to_string(),
    }
}

/// A kernel contract's refusal, as an error naming `op`.
pub(crate) fn kernel_error(op: &Op) -> impl Fn(KernelError) -> LowerError + Copy + '_ {
    move |e| LowerError::Invalid {
        site: site(op),
        problem: e.to_string(),
    }
}

/// The values of `tensor` where it is a constant int32 tensor of `channels` elements.
pub(crate) fn int32_constant_values(
    graph: &Graph<'_>,
    tensor: TensorId,
    channels: usize,
) -> Option<Vec<i32>> {
    let info = graph.tensor(tensor);
    let bytes = info.data?;
    if info.element_type != ElementType::Int32 || bytes.len() != channels * 4 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|word| i32::from_le_bytes([word[0], word[1], word[2], word[3]]))
            .collect(),
    )
}

/// The kernels' activation for the importer's.
pub(crate) fn kernel_activation(activation: Activation) -> KernelActivation {
    match activation {
        Activation::None => KernelActivation::None,
        Activation::Relu => KernelActivation::Relu,
        Activation::Relu6 => KernelActivation::Relu6,
        Activation::ReluN1To1 => KernelActivation::ReluN1To1,
    }
}

/// TFLM's padding and window for a 2-D op over an NHWC input.
pub(crate) fn window(
    padding: Padding,
    stride: Hw,
    dilation: Hw,
    input: &[usize],
    filter: (usize, usize),
) -> Window {
    let scheme = match padding {
        Padding::Same => KernelPadding::Same,
        Padding::Valid => KernelPadding::Valid,
    };
    let values = compute_padding_height_width(
        stride.h as i32,
        stride.w as i32,
        dilation.h as i32,
        dilation.w as i32,
        input[1] as i32,
        input[2] as i32,
        filter.0 as i32,
        filter.1 as i32,
        scheme,
    );
    Window {
        stride_height: stride.h,
        stride_width: stride.w,
        dilation_height: dilation.h,
        dilation_width: dilation.w,
        pad_height: values.height.max(0) as usize,
        pad_width: values.width.max(0) as usize,
    }
}
