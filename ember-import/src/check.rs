//! What every op's validation rule shares: the op under check ([`Ctx`]) with its tensors
//! ([`Arg`]), the checks most rules make (arity, element types, quantization, ranks and
//! shapes, fused activations, constant integer inputs) and the spatial-op helpers. The
//! rules themselves are in the op families (`crate::ops`).

use crate::tensor::ShapeDisplay;
use crate::tflite;
use crate::{
    Activation, ElementType, Hw, ImportError, OpKind, OpSite, Padding, Quantization, Tensor,
    TensorId,
};
use std::ops::RangeInclusive;

/// Checks an op against its operator's rules and returns its options parsed (an op
/// family's, in the registry, `crate::ops`).
pub(crate) type RuleFn = fn(&Ctx<'_, '_>) -> Result<OpKind, ImportError>;

/// An op as read from the file: a supported operator (its rule), its tensor indices (in
/// range) and its options, not yet checked.
pub(crate) struct RawOp<'a> {
    pub(crate) site: OpSite,
    pub(crate) rule: RuleFn,
    pub(crate) options: Option<tflite::BuiltinOptionsRef<'a>>,
    /// A custom op's `custom_options` (FlexBuffer bytes); empty for builtin ops.
    pub(crate) custom_options: &'a [u8],
    pub(crate) inputs: Vec<Option<TensorId>>,
    pub(crate) outputs: Vec<TensorId>,
}

/// Checks `raw` against its operator's rules and returns it with its options parsed.
pub(crate) fn check(raw: &RawOp<'_>, tensors: &[Tensor<'_>]) -> Result<OpKind, ImportError> {
    (raw.rule)(&Ctx { raw, tensors })
}

/// Reads an op's options table of the expected kind into the schema's owned type, with the
/// schema's defaults where the file has no options at all.
macro_rules! options {
    ($ctx:expr, $variant:ident) => {
        match $ctx.raw.options {
            None => $crate::tflite::$variant::default(),
            Some($crate::tflite::BuiltinOptionsRef::$variant(table)) => {
                $crate::tflite::$variant::try_from(table).map_err(|e| $ctx.malformed(e))?
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
    pub(crate) raw: &'r RawOp<'a>,
    tensors: &'r [Tensor<'a>],
}

/// An op's tensor with its role, for messages: `input 0 (tensor 3 `x`, [1, 49, 40], int8)`.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'r, 'a> {
    pub(crate) role: &'static str,
    pub(crate) slot: usize,
    pub(crate) id: TensorId,
    pub(crate) tensor: &'r Tensor<'a>,
}

impl std::fmt::Display for Arg<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (tensor {} `{}`, {} {})",
            self.role,
            self.slot,
            self.id.0,
            self.tensor.name,
            self.tensor.element_type,
            ShapeDisplay(&self.tensor.shape)
        )
    }
}

impl<'r, 'a> Arg<'r, 'a> {
    pub(crate) fn shape(&self) -> &'r [usize] {
        &self.tensor.shape
    }

    pub(crate) fn ty(&self) -> ElementType {
        self.tensor.element_type
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
            tensor: &self.tensors[id.index()],
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
            tensor: &self.tensors[id.index()],
        })
    }

    /// A fused activation the importer implements.
    pub(crate) fn activation(
        &self,
        activation: tflite::ActivationFunctionType,
    ) -> Result<Activation, ImportError> {
        use tflite::ActivationFunctionType as Fused;
        Ok(match activation {
            Fused::None => Activation::None,
            Fused::Relu => Activation::Relu,
            Fused::Relu6 => Activation::Relu6,
            Fused::ReluN1To1 => Activation::ReluN1To1,
            Fused::Tanh => {
                return Err(self.unsupported(
                    "fused_activation_function",
                    "TANH",
                    Activation::SUPPORTED,
                ))
            }
            Fused::SignBit => {
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
        let Some(data) = arg.tensor.data else {
            return Err(self.type_err(format!("{arg} must be a constant")));
        };
        Ok(match arg.ty() {
            ElementType::Int32 => data
                .chunks_exact(4)
                .map(|word| i64::from(i32::from_le_bytes([word[0], word[1], word[2], word[3]])))
                .collect(),
            ElementType::Int64 => data
                .chunks_exact(8)
                .map(|word| {
                    i64::from_le_bytes([
                        word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
                    ])
                })
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
        for arg in &args[1..] {
            if arg.ty() != first.ty() {
                return Err(self.type_err(format!("{arg} differs in type from {first}")));
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
            && !matches!(
                arg.tensor.quantization,
                Some(Quantization::PerTensor { .. })
            )
        {
            return Err(self.type_err(format!(
                "{arg} needs per-tensor quantization (scale and zero point)"
            )));
        }
        Ok(())
    }

    /// Requires `arg` to have rank `rank`.
    pub(crate) fn rank(&self, arg: Arg<'r, 'a>, rank: usize) -> Result<(), ImportError> {
        if arg.tensor.rank() != rank {
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
pub(crate) fn padding(padding: tflite::Padding) -> Padding {
    match padding {
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
pub(crate) fn hw(
    ctx: &Ctx<'_, '_>,
    names: [&str; 2],
    height: i32,
    width: i32,
) -> Result<Hw, ImportError> {
    Ok(Hw {
        h: ctx.positive(names[0], height)?,
        w: ctx.positive(names[1], width)?,
    })
}

/// The shape of a rank-4 tensor (after [`Ctx::rank`]).
pub(crate) fn dims4(arg: Arg<'_, '_>) -> [usize; 4] {
    let shape = arg.shape();
    [shape[0], shape[1], shape[2], shape[3]]
}

/// The bias of a weighted op: `channels` elements.
pub(crate) fn check_bias(
    ctx: &Ctx<'_, '_>,
    bias: Option<Arg<'_, '_>>,
    channels: usize,
) -> Result<(), ImportError> {
    if let Some(bias) = bias {
        if bias.tensor.num_elements() != channels || bias.tensor.rank() != 1 {
            return Err(ctx.shape_err(format!("{bias} should have shape [{channels}]")));
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
        (Float32, Int8 | ElementType::Uint8, _) => {
            return Err(ctx.type_err(format!(
                "{input}, {weights}: a hybrid op (float32 activations, 8-bit weights), which \
                 TFLM refuses (\"Hybrid models are not supported on TFLite Micro.\"): convert \
                 the model with full integer quantization, or keep its weights float32"
            )))
        }
        _ => {
            return Err(ctx.type_err(format!(
                "{input}, {weights}, {output}: supported input/weights/output types are \
                 float32/float32/float32, int8/int8/int8 and int16/int8/int16"
            )))
        }
    };
    if let Some(bias) = bias {
        if bias.ty() != bias_type {
            return Err(ctx.type_err(format!("{bias} should be {bias_type}")));
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
    match &weights.tensor.quantization {
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
