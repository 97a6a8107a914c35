//! RELU_N1_TO_1 and RELU_0_TO_1, TFLite's bounded RELUs (TFLM has neither op; TensorFlow
//! Lite's reference kernels are their oracle): float32 through `relu_n1_to_1_f32` or
//! `relu_0_to_1_f32`, int8 through `requantize_s8` with TFLite's `QuantizedReluX` clamp
//! (`ember_kernels::bounded_relu`).

use crate::check::Ctx;
use crate::element::ElementType::{Float32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::ImportError;
use ember_kernels::bounded_relu::{bounded_relu_s8, Bounds, Relu0To1F32, ReluN1To1F32};

/// One input and one output of its shape and type, float32 or int8 (quantized per tensor).
fn check_bounded_relu(ctx: &Ctx<'_, '_>, kind: OpKind) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    if ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")? != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(kind)
}

/// RELU_N1_TO_1's rule: one input and one output of its shape and type (float32, int8).
pub(super) fn check_relu_n1_to_1(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_bounded_relu(ctx, OpKind::ReluN1To1)
}

/// RELU_0_TO_1's rule: one input and one output of its shape and type (float32, int8).
pub(super) fn check_relu_0_to_1(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_bounded_relu(ctx, OpKind::Relu0To1)
}

/// RELU_N1_TO_1 or RELU_0_TO_1: float32 through its clamp kernel, int8 through
/// `requantize_s8` clamped to the bounds quantized at the output's scale.
pub(super) fn lower_bounded_relu(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let bounds = match op.kind {
        OpKind::ReluN1To1 => Bounds::MinusOneToOne,
        OpKind::Relu0To1 => Bounds::ZeroToOne,
        _ => return Err(lowering.invalid(op, "not a bounded RELU".into())),
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let len = lowering.graph.tensor(output).num_elements();
    let kernel = kernel_error(op);
    let tensors = [input, output];
    match (lowering.element_type(input), bounds) {
        (Int8, _) => {
            let input_q = lowering.per_tensor(op, input)?;
            let output_q = lowering.per_tensor(op, output)?;
            let params = bounded_relu_s8(len, bounds, input_q, output_q).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        (_, Bounds::MinusOneToOne) => {
            let params = ReluN1To1F32::prepare(len).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        (_, Bounds::ZeroToOne) => {
            let params = Relu0To1F32::prepare(len).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
    }
    Ok(())
}
