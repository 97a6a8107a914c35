//! SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH and LEAKY_RELU: one output value per input value
//! (SOFTMAX's and LOG_SOFTMAX's over the last dimension), the same shape.

use crate::check::{options, Ctx};
use crate::element::ElementType::{self, Float32, Int16, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::tensor::TensorId;
use crate::ImportError;
use ember_kernels::builtin::SOFTMAX_F32;
use ember_kernels::l2_normalization::{L2NormalizationF32, L2NormalizationS8, L2Rows};
use ember_kernels::leaky_relu::{LeakyReluF32, LeakyReluS8};
use ember_kernels::log_softmax::LogSoftmaxF32;
use ember_kernels::log_softmax_s8::LogSoftmaxS8;
use ember_kernels::logistic::{LogisticF32, LogisticS8};
use ember_kernels::softmax::{SoftmaxS8, SoftmaxS8S16};
use ember_kernels::tanh::{TanhF32, TanhS8};

/// SOFTMAX over the last dimension: float32 to float32, int8 to int8 or int16, int16 to
/// int16; the same shape.
pub(super) fn check_softmax(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let beta = options!(ctx, SoftmaxOptions).beta;
    if !beta.is_finite() {
        return Err(ctx.bad_options(format!("beta is {beta}")));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if input.tensor.rank() == 0 {
        return Err(ctx.shape_err(format!("{input} must have at least one dimension")));
    }
    ctx.shape_is(output, input.shape())?;
    match (input.ty(), output.ty()) {
        (Float32, Float32) => {}
        (Int8, Int8 | Int16) | (Int16, Int16) => {
            ctx.per_tensor(input)?;
            ctx.per_tensor(output)?;
        }
        _ => {
            return Err(ctx.type_err(format!(
                "{input} to {output}: supported are float32 to float32, int8 to int8 or int16, \
                 int16 to int16"
            )))
        }
    }
    Ok(OpKind::Softmax { beta })
}

/// LOG_SOFTMAX over the last dimension: float32 or int8, the same shape and type, an input
/// of rank at least 1.
pub(super) fn check_log_softmax(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if input.tensor.rank() == 0 {
        return Err(ctx.shape_err(format!("{input} must have at least one dimension")));
    }
    ctx.shape_is(output, input.shape())?;
    if ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")? != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(OpKind::LogSoftmax)
}

/// LOG_SOFTMAX: float32 (`log_softmax_f32`), or int8 (`log_softmax_s8`, whose output TFLM
/// requires to be scale 16/256 zero point 127).
pub(super) fn lower_log_softmax(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let (input, output, output_type) = unary_tensors(lowering, op)?;
    let (rows, depth) = rows(lowering, output);
    let kernel = kernel_error(op);
    if output_type == Int8 {
        let (input_scale, _) = lowering.per_tensor(op, input)?;
        let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
        let params =
            LogSoftmaxS8::prepare(rows, depth, input_scale, output_scale, output_zero_point)
                .map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let params = LogSoftmaxF32::new(rows, depth).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}

/// L2_NORMALIZATION over the last dimension: float32 or int8, the same shape and type, rank
/// 1 to 4, no fused activation (TFLM takes none).
pub(super) fn check_l2_normalization(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let activation = options!(ctx, L2NormOptions).fused_activation_function;
    if ctx.activation(activation)? != crate::op::Activation::None {
        return Err(ctx.bad_options("a fused activation, which TFLM's L2_NORMALIZATION refuses"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if !(1..=4).contains(&input.tensor.rank()) {
        return Err(ctx.shape_err(format!("{input} must have rank 1 to 4")));
    }
    ctx.shape_is(output, input.shape())?;
    if ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")? != Float32 {
        ctx.per_tensor(input)?;
    }
    Ok(OpKind::L2Normalization)
}

/// L2_NORMALIZATION: int8 into Q0.7 (TFLM's output scale, whatever the tensor says), or
/// float32.
pub(super) fn lower_l2_normalization(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let (input, output, output_type) = unary_tensors(lowering, op)?;
    let (outer, depth) = rows(lowering, output);
    let rows = L2Rows { outer, depth };
    if output_type == Int8 {
        let params = L2NormalizationS8 {
            rows,
            input_zero_point: lowering.per_tensor(op, input)?.1,
        };
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        lowering.dispatch_params(&L2NormalizationF32 { rows }, &[input, output]);
    }
    Ok(())
}

/// LOGISTIC: the same shape and type (float32, int8, int16).
pub(super) fn check_logistic(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unary(ctx).map(|()| OpKind::Logistic)
}

/// TANH: the same shape and type (float32, int8, int16).
pub(super) fn check_tanh(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unary(ctx).map(|()| OpKind::Tanh)
}

/// LEAKY_RELU: the same shape and type (float32, int8, int16), a finite alpha.
pub(super) fn check_leaky_relu(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let alpha = options!(ctx, LeakyReluOptions).alpha;
    if !alpha.is_finite() {
        return Err(ctx.bad_options(format!("alpha is {alpha}")));
    }
    check_unary(ctx).map(|()| OpKind::LeakyRelu { alpha })
}

/// LOGISTIC, TANH and LEAKY_RELU: the same shape and type (float32, int8, int16).
fn check_unary(ctx: &Ctx<'_, '_>) -> Result<(), ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    let ty = ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(())
}

/// An op's input and output, and the output's element type.
fn unary_tensors(
    lowering: &Lowering<'_, '_>,
    op: &Op,
) -> Result<(TensorId, TensorId, ElementType), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    Ok((input, output, lowering.element_type(output)))
}

/// SOFTMAX: int8 to int8 or int16, float32 to float32 (the built-in `softmax_f32`).
pub(super) fn lower_softmax(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Softmax { beta } = op.kind else {
        return Err(lowering.invalid(op, "not a SOFTMAX".into()));
    };
    let (input, output, output_type) = unary_tensors(lowering, op)?;
    let kernel = kernel_error(op);
    let (outer, depth) = rows(lowering, output);
    if lowering.element_type(input) == Float32 {
        // The built-in softmax_f32 with the options' beta (finite: the check refused
        // others), a workgroup per 64 rows (a GPU's lanes each take a row).
        let too_big = || lowering.invalid(op, format!("{outer} rows of {depth} elements"));
        let words = [
            u32::try_from(outer).map_err(|_| too_big())?,
            u32::try_from(depth).map_err(|_| too_big())?,
            beta.to_bits(),
        ];
        let groups = Lowering::groups_for(outer);
        return lowering.dispatch_builtin(op, &SOFTMAX_F32, groups, &words, &[input, output]);
    }
    let (input_scale, _) = lowering.per_tensor(op, input)?;
    let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
    if output_type == Int8 {
        let params = SoftmaxS8::prepare(
            outer,
            depth,
            beta,
            input_scale,
            output_scale,
            output_zero_point,
        )
        .map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let params = SoftmaxS8S16::prepare(
            outer,
            depth,
            beta,
            input_scale,
            output_scale,
            output_zero_point,
        )
        .map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}

/// The rows of a tensor for an op over its last dimension: (product of the others, last).
fn rows(lowering: &Lowering<'_, '_>, tensor: TensorId) -> (usize, usize) {
    let shape = &lowering.graph.tensor(tensor).shape;
    let depth = shape.last().copied().unwrap_or(1);
    (shape.iter().rev().skip(1).product(), depth)
}

/// LOGISTIC: int8 to int8, float32 to float32.
pub(super) fn lower_logistic(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let (input, output, _) = unary_tensors(lowering, op)?;
    let kernel = kernel_error(op);
    let len = lowering.graph.tensor(output).num_elements();
    if lowering.element_type(input) == Float32 {
        let params = LogisticF32::prepare(len).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
        let (_, output_zero_point) = lowering.per_tensor(op, output)?;
        let params = LogisticS8::prepare(len, input_scale, input_zero_point, output_zero_point)
            .map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}

/// TANH: int8 to int8, float32 to float32.
pub(super) fn lower_tanh(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let (input, output, _) = unary_tensors(lowering, op)?;
    let kernel = kernel_error(op);
    let len = lowering.graph.tensor(output).num_elements();
    if lowering.element_type(input) == Float32 {
        let params = TanhF32::prepare(len).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
        let params = TanhS8::prepare(len, input_scale, input_zero_point).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}

/// LEAKY_RELU: int8 to int8, float32 to float32.
pub(super) fn lower_leaky_relu(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::LeakyRelu { alpha } = op.kind else {
        return Err(lowering.invalid(op, "not a LEAKY_RELU".into()));
    };
    let (input, output, _) = unary_tensors(lowering, op)?;
    let kernel = kernel_error(op);
    let len = lowering.graph.tensor(output).num_elements();
    if lowering.element_type(input) == Float32 {
        let params = LeakyReluF32::prepare(len, alpha).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let input_q = lowering.per_tensor(op, input)?;
        let output_q = lowering.per_tensor(op, output)?;
        let params = LeakyReluS8::prepare(len, alpha, input_q, output_q).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}
