//! ARG_MAX and ARG_MIN: one dimension reduced to the index of its largest or smallest
//! value (the `arg_min_max` kernel); SUM, REDUCE_MAX and REDUCE_MIN over MEAN's axes
//! (`ember_kernels::reduce`, on MEAN's walk). MEAN is with the layout ops.

use super::layout::{axis_index, check_reduction, same_quantization};
use crate::check::Ctx;
use crate::element::ElementType::{Float32, Int16, Int32, Int64, Int8, Uint8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind, ReduceOp};
use crate::ImportError;
use ember_kernels::arg_min_max::ArgMinMax;
use ember_kernels::mean::{MeanS8, MeanShape, SumS8};
use ember_kernels::reduce::{ReduceMaxF32, ReduceMaxS8, ReduceMinF32, ReduceMinS8, SumF32};

/// ARG_MAX and ARG_MIN: an input of rank at least 1 (float32, int8, uint8, int16 or
/// int32), the axis a constant scalar (negative counts from the end), the output int32 or
/// int64 of the input's shape without the axis.
fn check_arg(ctx: &Ctx<'_, '_>) -> Result<usize, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, axis] and one output")?;
    let (input, axis_arg, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let values = ctx.const_ints(axis_arg)?;
    let [value] = values.as_slice() else {
        return Err(ctx.shape_err(format!("{axis_arg} must hold one value")));
    };
    let axis = axis_index(*value, rank)
        .ok_or_else(|| ctx.bad_options(format!("axis {value} is outside rank {rank}")))?;
    if !matches!(input.ty(), Float32 | Int8 | Uint8 | Int16 | Int32) {
        return Err(ctx.type_err(format!(
            "{input}: supported types are float32, int8, uint8, int16, int32"
        )));
    }
    if !matches!(output.ty(), Int32 | Int64) {
        return Err(ctx.type_err(format!("{output}: supported types are int32, int64")));
    }
    let mut expected = input.shape().to_vec();
    expected.remove(axis);
    ctx.shape_is(output, &expected)?;
    Ok(axis)
}

/// ARG_MAX.
pub(super) fn check_arg_max(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_arg(ctx).map(|axis| OpKind::ArgMax { axis })
}

/// ARG_MIN.
pub(super) fn check_arg_min(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_arg(ctx).map(|axis| OpKind::ArgMin { axis })
}

/// ARG_MAX and ARG_MIN, int8 or float32 to int32.
pub(super) fn lower_arg(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let (axis, is_max) = match op.kind {
        OpKind::ArgMax { axis } => (axis, true),
        OpKind::ArgMin { axis } => (axis, false),
        _ => return Err(lowering.invalid(op, "not ARG_MAX or ARG_MIN".into())),
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    if lowering.element_type(output) != Int32 {
        return Err(lowering.unsupported(op, format!("{} to int64", op.kind.name())));
    }
    let shape = &lowering.graph.tensor(input).shape;
    let params = ArgMinMax {
        float: lowering.element_type(input) == Float32,
        outer: shape[..axis].iter().product(),
        axis_size: shape[axis],
        inner: shape[axis + 1..].iter().product(),
        is_max,
    }
    .validate()
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// SUM: MEAN's rules.
pub(super) fn check_sum(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let (axes, keep_dims) = check_reduction(ctx)?;
    Ok(OpKind::Reduce {
        op: ReduceOp::Sum,
        axes,
        keep_dims,
    })
}

/// REDUCE_MAX and REDUCE_MIN: MEAN's rules, and an integer output quantized as the input
/// (they compare raw values, as TFLM requires).
fn check_extreme(ctx: &Ctx<'_, '_>, op: ReduceOp) -> Result<OpKind, ImportError> {
    let (axes, keep_dims) = check_reduction(ctx)?;
    same_quantization(ctx, ctx.input(0)?, ctx.output(0)?)?;
    Ok(OpKind::Reduce {
        op,
        axes,
        keep_dims,
    })
}

/// REDUCE_MAX.
pub(super) fn check_reduce_max(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_extreme(ctx, ReduceOp::Max)
}

/// REDUCE_MIN.
pub(super) fn check_reduce_min(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_extreme(ctx, ReduceOp::Min)
}

/// SUM, REDUCE_MAX and REDUCE_MIN, int8 or float32 (int8 SUM rescaled as TFLM's
/// `QuantizedMeanOrSum`).
pub(super) fn lower_reduce(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Reduce {
        op: reduce, axes, ..
    } = &op.kind
    else {
        return Err(lowering.invalid(op, "not a reduction".into()));
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let axes: Vec<i32> = axes.iter().map(|&axis| axis as i32).collect();
    let shape =
        MeanShape::new(&lowering.graph.tensor(input).shape, &axes).map_err(kernel_error(op))?;
    let tensors = [input, output];
    match (reduce, lowering.element_type(input) == Float32) {
        (ReduceOp::Sum, true) => lowering.dispatch_params(&SumF32::new(shape), &tensors),
        (ReduceOp::Max, true) => lowering.dispatch_params(&ReduceMaxF32::new(shape), &tensors),
        (ReduceOp::Min, true) => lowering.dispatch_params(&ReduceMinF32::new(shape), &tensors),
        (ReduceOp::Max, false) => lowering.dispatch_params(&ReduceMaxS8::new(shape), &tensors),
        (ReduceOp::Min, false) => lowering.dispatch_params(&ReduceMinS8::new(shape), &tensors),
        (ReduceOp::Sum, false) => {
            let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
            let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
            let (multiplier, shift) = MeanS8::multiplier(input_scale, output_scale);
            let params = SumS8(MeanS8 {
                shape,
                input_zero_point,
                output_zero_point,
                multiplier,
                shift,
            });
            lowering.dispatch_params(&params, &tensors);
        }
    }
    Ok(())
}
