//! FILL, ZEROS_LIKE, BROADCAST_TO and SHAPE: outputs filled from one value, or broadcast
//! from an input or a constant. Each lowers to one `select` of a constant `true`, whose
//! broadcasting does the filling: FILL from its value, ZEROS_LIKE from a zero, BROADCAST_TO
//! from its input, SHAPE from a constant of the input's (static) dimensions.

use super::elementwise::broadcast;
use crate::check::Ctx;
use crate::element::ElementType::{self, Float32, Int16, Int32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::select::{Select, SelectShape};
use ember_kernels::KernelParams;
use hal_core::module::Operand;

/// The shape a constant shape input names (every dimension at least 1).
fn named_shape(ctx: &Ctx<'_, '_>, slot: usize) -> Result<Vec<usize>, ImportError> {
    let arg = ctx.input(slot)?;
    if arg.shape().len() != 1 {
        return Err(ctx.shape_err(format!("{arg} must have rank 1")));
    }
    ctx.const_ints(arg)?
        .into_iter()
        .map(|dim| {
            usize::try_from(dim)
                .ok()
                .filter(|&dim| dim >= 1)
                .ok_or_else(|| ctx.shape_err(format!("{arg}: dimension {dim} is not positive")))
        })
        .collect()
}

/// FILL: inputs `[dims, value]`, `dims` a constant, `value` a scalar of the output's type
/// (float32, int32, int8, as TFLM takes them); the output of shape `dims`.
pub(super) fn check_fill(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [dims, value] and one output")?;
    let dims = named_shape(ctx, 0)?;
    let (value, output) = (ctx.input(1)?, ctx.output(0)?);
    if value.tensor.num_elements() != 1 || !value.shape().is_empty() {
        return Err(ctx.shape_err(format!("{value} must be a scalar")));
    }
    ctx.same_type(
        &[value, output],
        &[Float32, Int32, Int8],
        "float32, int32, int8",
    )?;
    ctx.shape_is(output, &dims)?;
    Ok(OpKind::Fill)
}

/// ZEROS_LIKE: one input and an output of its shape and type (float32, int32, int8).
pub(super) fn check_zeros_like(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    ctx.same_type(
        &[input, output],
        &[Float32, Int32, Int8],
        "float32, int32, int8",
    )?;
    Ok(OpKind::ZerosLike)
}

/// BROADCAST_TO: inputs `[input, shape]`, `shape` a constant of at most 5 dimensions that
/// the input broadcasts to (as TFLM's); the output of that shape and the input's type.
pub(super) fn check_broadcast_to(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, shape] and one output")?;
    let shape = named_shape(ctx, 1)?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if shape.len() > 5 || input.shape().len() > shape.len() {
        return Err(ctx.shape_err(format!(
            "{input} to {}: at most 5 dimensions, and no fewer than the input's",
            ShapeDisplay(&shape)
        )));
    }
    if broadcast(input.shape(), &shape).as_deref() != Some(shape.as_slice()) {
        return Err(ctx.shape_err(format!(
            "{input} does not broadcast to {}",
            ShapeDisplay(&shape)
        )));
    }
    ctx.same_type(
        &[input, output],
        &[Float32, Int32, Int16, Int8],
        "float32, int32, int16, int8",
    )?;
    ctx.shape_is(output, &shape)?;
    Ok(OpKind::BroadcastTo)
}

/// SHAPE: one input and an int32 output of its rank, the input's dimensions.
pub(super) fn check_shape(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if output.ty() != Int32 {
        return Err(ctx.type_err(format!("{output}: supported types are int32")));
    }
    ctx.shape_is(output, &[input.shape().len()])?;
    Ok(OpKind::Shape)
}

/// FILL, ZEROS_LIKE, BROADCAST_TO or SHAPE: the output filled by a `select` of a constant
/// `true` from its source.
pub(super) fn lower_fill(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let output = op.outputs[0];
    let element: ElementType = lowering.element_type(output);
    let (source, source_shape): (Operand, Vec<usize>) = match op.kind {
        OpKind::Fill => (lowering.operand(lowering.input(op, 1)?), vec![1]),
        OpKind::ZerosLike => (
            lowering.constant(&format!("op {} zero", op.index), &vec![0u8; element.size()]),
            vec![1],
        ),
        OpKind::BroadcastTo => {
            let input = lowering.input(op, 0)?;
            let shape = lowering.graph.tensor(input).shape.clone();
            (lowering.operand(input), shape)
        }
        OpKind::Shape => {
            let input = lowering.input(op, 0)?;
            let dims: Vec<i32> = lowering
                .graph
                .tensor(input)
                .shape
                .iter()
                .map(|&dim| i32::try_from(dim).unwrap_or(i32::MAX))
                .collect();
            let len = dims.len().max(1);
            (
                lowering.i32_constant(&format!("op {} shape", op.index), &dims),
                vec![len],
            )
        }
        _ => return Err(lowering.invalid(op, "not a fill".into())),
    };
    let output_shape = lowering.graph.tensor(output).shape.clone();
    let kernel = kernel_error(op);
    let shape =
        SelectShape::new(&[1], &source_shape, &source_shape, &output_shape).map_err(kernel)?;
    let params = Select {
        shape,
        element_bytes: element.size(),
    }
    .validate()
    .map_err(kernel)?;
    let mut words = Vec::new();
    params.encode(&mut words);
    let bindings = [
        lowering.constant(&format!("op {} true", op.index), &[1]),
        source,
        source,
        lowering.operand(output),
    ];
    lowering.dispatch(Select::KERNEL, &words, &bindings);
    Ok(())
}
