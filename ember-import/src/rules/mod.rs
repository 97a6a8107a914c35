//! Per-operator rules: each supported operator's arity, options, element types,
//! quantization and shapes, checked against its tensors. One function per operator, grouped
//! by family: [`conv`] (CONV_2D, DEPTHWISE_CONV_2D, the pools), [`fully_connected`],
//! [`elementwise`] (ADD, MUL, SOFTMAX, LOGISTIC, TANH, QUANTIZE, DEQUANTIZE) and [`layout`]
//! (RESHAPE, PAD, MEAN, TRANSPOSE, CONCATENATION, STRIDED_SLICE).

mod conv;
mod elementwise;
mod fully_connected;
mod layout;

use crate::tensor::ShapeDisplay;
use crate::tflite;
use crate::{
    Activation, ElementType, Hw, ImportError, OpKind, OpSite, Padding, Quantization, Tensor,
    TensorId,
};
use std::ops::RangeInclusive;

/// The supported builtin operators, before their options are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    FullyConnected,
    Conv2d,
    DepthwiseConv2d,
    AveragePool2d,
    MaxPool2d,
    Add,
    Mul,
    Softmax,
    Logistic,
    Tanh,
    Reshape,
    Pad,
    Mean,
    Transpose,
    Concatenation,
    StridedSlice,
    Quantize,
    Dequantize,
}

impl Builtin {
    /// The supported operator with this builtin code, if any.
    pub(crate) fn from_code(code: i32) -> Option<Self> {
        use tflite::BuiltinOperator as B;
        let op = tflite::BuiltinOperator::try_from(code).ok()?;
        Some(match op {
            B::FullyConnected => Self::FullyConnected,
            B::Conv2d => Self::Conv2d,
            B::DepthwiseConv2d => Self::DepthwiseConv2d,
            B::AveragePool2d => Self::AveragePool2d,
            B::MaxPool2d => Self::MaxPool2d,
            B::Add => Self::Add,
            B::Mul => Self::Mul,
            B::Softmax => Self::Softmax,
            B::Logistic => Self::Logistic,
            B::Tanh => Self::Tanh,
            B::Reshape => Self::Reshape,
            B::Pad => Self::Pad,
            B::Mean => Self::Mean,
            B::Transpose => Self::Transpose,
            B::Concatenation => Self::Concatenation,
            B::StridedSlice => Self::StridedSlice,
            B::Quantize => Self::Quantize,
            B::Dequantize => Self::Dequantize,
            _ => return None,
        })
    }
}

/// An op as read from the file: a supported operator, its tensor indices (in range) and its
/// options, not yet checked.
pub(crate) struct RawOp<'a> {
    pub(crate) site: OpSite,
    pub(crate) builtin: Builtin,
    pub(crate) options: Option<tflite::BuiltinOptionsRef<'a>>,
    pub(crate) inputs: Vec<Option<TensorId>>,
    pub(crate) outputs: Vec<TensorId>,
}

/// Checks `raw` against its operator's rules and returns it with its options parsed.
pub(crate) fn check(raw: &RawOp<'_>, tensors: &[Tensor<'_>]) -> Result<OpKind, ImportError> {
    let ctx = Ctx { raw, tensors };
    match raw.builtin {
        Builtin::FullyConnected => fully_connected::fully_connected(&ctx),
        Builtin::Conv2d => conv::conv2d(&ctx),
        Builtin::DepthwiseConv2d => conv::depthwise_conv2d(&ctx),
        Builtin::AveragePool2d => conv::pool2d(&ctx).map(OpKind::AveragePool2d),
        Builtin::MaxPool2d => conv::pool2d(&ctx).map(OpKind::MaxPool2d),
        Builtin::Add => elementwise::add_mul(&ctx, true),
        Builtin::Mul => elementwise::add_mul(&ctx, false),
        Builtin::Softmax => elementwise::softmax(&ctx),
        Builtin::Logistic => elementwise::unary(&ctx).map(|()| OpKind::Logistic),
        Builtin::Tanh => elementwise::unary(&ctx).map(|()| OpKind::Tanh),
        Builtin::Quantize => elementwise::quantize(&ctx),
        Builtin::Dequantize => elementwise::dequantize(&ctx),
        Builtin::Reshape => layout::reshape(&ctx),
        Builtin::Pad => layout::pad(&ctx),
        Builtin::Mean => layout::mean(&ctx),
        Builtin::Transpose => layout::transpose(&ctx),
        Builtin::Concatenation => layout::concatenation(&ctx),
        Builtin::StridedSlice => layout::strided_slice(&ctx),
    }
}

/// Reads an op's options table of the expected kind into the schema's owned type, with the
/// schema's defaults where the file has no options at all.
macro_rules! options {
    ($ctx:expr, $variant:ident) => {
        match $ctx.raw.options {
            None => $crate::tflite::$variant::default(),
            Some($crate::tflite::BuiltinOptionsRef::$variant(r)) => {
                $crate::tflite::$variant::try_from(r).map_err(|e| $ctx.malformed(e))?
            }
            Some(_) => {
                return Err($ctx.bad_options(concat!("the options are not ", stringify!($variant))))
            }
        }
    };
}
pub(crate) use options;

/// An op under check, with the graph's tensors.
pub(crate) struct Ctx<'r, 'a> {
    raw: &'r RawOp<'a>,
    tensors: &'r [Tensor<'a>],
}

/// An op's tensor with its role, for messages: `input 0 (tensor 3 `x`, [1, 49, 40], int8)`.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'r, 'a> {
    pub(crate) role: &'static str,
    pub(crate) slot: usize,
    pub(crate) id: TensorId,
    pub(crate) t: &'r Tensor<'a>,
}

impl std::fmt::Display for Arg<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (tensor {} `{}`, {} {})",
            self.role,
            self.slot,
            self.id.0,
            self.t.name,
            self.t.element_type,
            ShapeDisplay(&self.t.shape)
        )
    }
}

impl<'r, 'a> Arg<'r, 'a> {
    pub(crate) fn shape(&self) -> &'r [usize] {
        &self.t.shape
    }

    pub(crate) fn ty(&self) -> ElementType {
        self.t.element_type
    }
}

impl<'r, 'a> Ctx<'r, 'a> {
    pub(crate) fn site(&self) -> OpSite {
        self.raw.site.clone()
    }

    pub(crate) fn malformed(&self, source: planus::Error) -> ImportError {
        ImportError::Malformed {
            at: self.raw.site.to_string(),
            source,
        }
    }

    pub(crate) fn bad_options(&self, reason: impl Into<String>) -> ImportError {
        ImportError::BadOptions {
            op: self.site(),
            reason: reason.into(),
        }
    }

    pub(crate) fn shape_err(&self, reason: impl Into<String>) -> ImportError {
        ImportError::OpShape {
            op: self.site(),
            reason: reason.into(),
        }
    }

    pub(crate) fn type_err(&self, reason: impl Into<String>) -> ImportError {
        ImportError::OpType {
            op: self.site(),
            reason: reason.into(),
        }
    }

    pub(crate) fn unsupported(
        &self,
        option: &'static str,
        value: impl std::fmt::Display,
        supported: &'static str,
    ) -> ImportError {
        ImportError::UnsupportedOption {
            op: self.site(),
            option,
            value: value.to_string(),
            supported,
        }
    }

    /// Checks the number of inputs (within `inputs`, the first `required` present) and
    /// outputs.
    pub(crate) fn arity(
        &self,
        inputs: RangeInclusive<usize>,
        required: usize,
        outputs: usize,
        expected: &'static str,
    ) -> Result<(), ImportError> {
        let absent_required = self.raw.inputs.iter().take(required).any(Option::is_none);
        if !inputs.contains(&self.raw.inputs.len())
            || self.raw.outputs.len() != outputs
            || absent_required
        {
            return Err(ImportError::Arity {
                op: self.site(),
                expected,
                inputs: self.raw.inputs.len(),
                outputs: self.raw.outputs.len(),
                absent_required,
            });
        }
        Ok(())
    }

    /// The number of inputs.
    pub(crate) fn input_count(&self) -> usize {
        self.raw.inputs.len()
    }

    /// Input `slot`, which [`Ctx::arity`] made sure is present.
    pub(crate) fn input(&self, slot: usize) -> Result<Arg<'r, 'a>, ImportError> {
        self.opt_input(slot).ok_or_else(|| ImportError::Arity {
            op: self.site(),
            expected: "this input",
            inputs: self.raw.inputs.len(),
            outputs: self.raw.outputs.len(),
            absent_required: true,
        })
    }

    /// Input `slot`, if present.
    pub(crate) fn opt_input(&self, slot: usize) -> Option<Arg<'r, 'a>> {
        let id = (*self.raw.inputs.get(slot)?)?;
        Some(Arg {
            role: "input",
            slot,
            id,
            t: &self.tensors[id.index()],
        })
    }

    /// Output `slot`, which [`Ctx::arity`] made sure exists.
    pub(crate) fn output(&self, slot: usize) -> Result<Arg<'r, 'a>, ImportError> {
        let id = *self
            .raw
            .outputs
            .get(slot)
            .ok_or_else(|| ImportError::Arity {
                op: self.site(),
                expected: "this output",
                inputs: self.raw.inputs.len(),
                outputs: self.raw.outputs.len(),
                absent_required: false,
            })?;
        Ok(Arg {
            role: "output",
            slot,
            id,
            t: &self.tensors[id.index()],
        })
    }

    /// A fused activation the importer implements.
    pub(crate) fn activation(
        &self,
        a: tflite::ActivationFunctionType,
    ) -> Result<Activation, ImportError> {
        use tflite::ActivationFunctionType as A;
        Ok(match a {
            A::None => Activation::None,
            A::Relu => Activation::Relu,
            A::Relu6 => Activation::Relu6,
            A::ReluN1To1 => Activation::ReluN1To1,
            A::Tanh => {
                return Err(self.unsupported(
                    "fused_activation_function",
                    "TANH",
                    Activation::SUPPORTED,
                ))
            }
            A::SignBit => {
                return Err(self.unsupported(
                    "fused_activation_function",
                    "SIGN_BIT",
                    Activation::SUPPORTED,
                ))
            }
        })
    }

    /// A stride, dilation or window size: at least 1.
    pub(crate) fn positive(&self, option: &str, value: i32) -> Result<usize, ImportError> {
        usize::try_from(value)
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| self.bad_options(format!("{option} is {value}, not at least 1")))
    }

    /// The values of a constant integer input (int32 or int64), such as axes or paddings.
    pub(crate) fn const_ints(&self, arg: Arg<'r, 'a>) -> Result<Vec<i64>, ImportError> {
        let Some(data) = arg.t.data else {
            return Err(self.type_err(format!("{arg} must be a constant")));
        };
        Ok(match arg.ty() {
            ElementType::Int32 => data
                .chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            ElementType::Int64 => data
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
            _ => return Err(self.type_err(format!("{arg} must be int32 or int64"))),
        })
    }

    /// Requires `args` to share one element type, from `allowed`.
    pub(crate) fn same_type(
        &self,
        args: &[Arg<'r, 'a>],
        allowed: &[ElementType],
        allowed_text: &'static str,
    ) -> Result<ElementType, ImportError> {
        let Some(first) = args.first() else {
            return Err(self.type_err("no tensors"));
        };
        for a in &args[1..] {
            if a.ty() != first.ty() {
                return Err(self.type_err(format!("{a} differs in type from {first}")));
            }
        }
        if !allowed.contains(&first.ty()) {
            return Err(self.type_err(format!("{first}: supported types are {allowed_text}")));
        }
        Ok(first.ty())
    }

    /// A quantized integer tensor (int8, uint8, int16) must be quantized per tensor.
    pub(crate) fn per_tensor(&self, arg: Arg<'r, 'a>) -> Result<(), ImportError> {
        if arg.ty().is_quantized_integer()
            && !matches!(arg.t.quantization, Some(Quantization::PerTensor { .. }))
        {
            return Err(self.type_err(format!(
                "{arg} needs per-tensor quantization (scale and zero point)"
            )));
        }
        Ok(())
    }

    /// Requires `arg` to have rank `rank`.
    pub(crate) fn rank(&self, arg: Arg<'r, 'a>, rank: usize) -> Result<(), ImportError> {
        if arg.t.rank() != rank {
            return Err(self.shape_err(format!("{arg} must have rank {rank}")));
        }
        Ok(())
    }

    /// Requires `arg`'s shape to be `expected`.
    pub(crate) fn shape_is(&self, arg: Arg<'r, 'a>, expected: &[usize]) -> Result<(), ImportError> {
        if arg.shape() != expected {
            return Err(self.shape_err(format!(
                "{arg} should have shape {}",
                ShapeDisplay(expected)
            )));
        }
        Ok(())
    }
}

/// The padding kind.
pub(crate) fn padding(p: tflite::Padding) -> Padding {
    match p {
        tflite::Padding::Same => Padding::Same,
        tflite::Padding::Valid => Padding::Valid,
    }
}

/// TFLite's output size along one spatial dimension (`ComputeOutSize`), `None` where it would
/// be 0 or overflow.
pub(crate) fn out_size(
    padding: Padding,
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
) -> Option<usize> {
    let effective = filter
        .checked_sub(1)?
        .checked_mul(dilation)?
        .checked_add(1)?;
    let size = match padding {
        Padding::Same => input.checked_add(stride - 1)? / stride,
        Padding::Valid => input.checked_add(stride)?.checked_sub(effective)? / stride,
    };
    (size > 0).then_some(size)
}

/// `Hw` from two options that must each be at least 1.
pub(crate) fn hw(ctx: &Ctx<'_, '_>, names: [&str; 2], h: i32, w: i32) -> Result<Hw, ImportError> {
    Ok(Hw {
        h: ctx.positive(names[0], h)?,
        w: ctx.positive(names[1], w)?,
    })
}

/// The shape of a rank-4 tensor (after [`Ctx::rank`]).
pub(crate) fn dims4(a: Arg<'_, '_>) -> [usize; 4] {
    let s = a.shape();
    [s[0], s[1], s[2], s[3]]
}

/// The bias of a weighted op: `channels` elements.
pub(crate) fn check_bias(
    ctx: &Ctx<'_, '_>,
    bias: Option<Arg<'_, '_>>,
    channels: usize,
) -> Result<(), ImportError> {
    if let Some(b) = bias {
        if b.t.num_elements() != channels || b.t.rank() != 1 {
            return Err(ctx.shape_err(format!("{b} should have shape [{channels}]")));
        }
    }
    Ok(())
}

/// Element types and quantization of a weighted op (FULLY_CONNECTED, CONV_2D,
/// DEPTHWISE_CONV_2D): float32 throughout; int8 activations and weights with int32 bias; or
/// int16 activations, int8 weights and int64 bias. Quantized activations are per tensor;
/// weights per tensor or per channel along `channel_axis` with zero points 0.
pub(crate) fn weights_types(
    ctx: &Ctx<'_, '_>,
    input: Arg<'_, '_>,
    weights: Arg<'_, '_>,
    bias: Option<Arg<'_, '_>>,
    output: Arg<'_, '_>,
    channel_axis: usize,
    quantized_bias_type: tflite::TensorType,
) -> Result<(), ImportError> {
    use ElementType::{Float32, Int16, Int32, Int64, Int8};
    let bias_type = match (input.ty(), weights.ty(), output.ty()) {
        (Float32, Float32, Float32) => Float32,
        (Int8, Int8, Int8) => Int32,
        (Int16, Int8, Int16) => Int64,
        _ => {
            return Err(ctx.type_err(format!(
                "{input}, {weights}, {output}: supported input/weights/output types are \
                 float32/float32/float32, int8/int8/int8 and int16/int8/int16"
            )))
        }
    };
    if let Some(b) = bias {
        if b.ty() != bias_type {
            return Err(ctx.type_err(format!("{b} should be {bias_type}")));
        }
    }
    // FLOAT32 (0) is the schema's "not set"; where set it must name the bias type.
    if quantized_bias_type != tflite::TensorType::Float32
        && quantized_bias_type != bias_type.to_tflite()
    {
        return Err(ctx.unsupported(
            "quantized_bias_type",
            format!("{quantized_bias_type:?}"),
            "the bias's own type (int32 for int8, int64 for int16)",
        ));
    }
    if bias_type == Float32 {
        return Ok(());
    }
    ctx.per_tensor(input)?;
    ctx.per_tensor(output)?;
    match &weights.t.quantization {
        Some(Quantization::PerTensor { .. }) => Ok(()),
        Some(Quantization::PerChannel {
            axis, zero_points, ..
        }) => {
            if *axis != channel_axis {
                return Err(ctx.type_err(format!(
                    "{weights} is quantized per channel along dimension {axis}, \
                     not its output channels (dimension {channel_axis})"
                )));
            }
            if zero_points.iter().any(|&z| z != 0) {
                return Err(ctx.type_err(format!(
                    "{weights} is quantized per channel with nonzero zero points"
                )));
            }
            Ok(())
        }
        None => Err(ctx.type_err(format!("{weights} has no quantization"))),
    }
}

/// The output size of a spatial dimension, or a shape error that says why there is none.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spatial(
    ctx: &Ctx<'_, '_>,
    what: &str,
    padding: Padding,
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
) -> Result<usize, ImportError> {
    out_size(padding, input, filter, stride, dilation).ok_or_else(|| {
        ctx.shape_err(format!(
            "{what}: a window of {filter} (dilation {dilation}) does not fit an input of {input} \
             with {padding:?} padding"
        ))
    })
}
