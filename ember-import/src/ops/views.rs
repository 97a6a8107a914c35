//! SQUEEZE and EXPAND_DIMS: the same bytes under another shape, lowered as RESHAPE is, to a
//! view of the input (neither a step nor bytes; a model output gets its input's bytes
//! copied).

use super::layout::{axis_index, same_quantization, ANY, ANY_TEXT};
use crate::check::{options, Ctx};
use crate::op::OpKind;
use crate::tensor::ShapeDisplay;
use crate::ImportError;

/// SQUEEZE: the output is the input without the dimensions `squeeze_dims` names (each of
/// size 1; negative counts from the end), or without every dimension of size 1 where it
/// names none; the same type and quantization.
pub(super) fn check_squeeze(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let dims = options!(ctx, SqueezeOptions)
        .squeeze_dims
        .unwrap_or_default();
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let mut dropped = vec![dims.is_empty(); rank];
    for &dim in &dims {
        let Some(index) = axis_index(i64::from(dim), rank) else {
            return Err(ctx.bad_options(format!("squeeze_dims {dim} is outside rank {rank}")));
        };
        dropped[index] = true;
    }
    let named_not_one =
        (0..rank).find(|&index| !dims.is_empty() && dropped[index] && input.shape()[index] != 1);
    if let Some(index) = named_not_one {
        return Err(ctx.shape_err(format!(
            "squeeze_dims names dimension {index} of {input}, which is not 1"
        )));
    }
    let expected: Vec<usize> = input
        .shape()
        .iter()
        .zip(&dropped)
        .filter(|(&size, &drop)| !(drop && size == 1))
        .map(|(&size, _)| size)
        .collect();
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::Squeeze)
}

/// EXPAND_DIMS: the output is the input with a dimension of 1 inserted before dimension
/// `axis` (a constant scalar in `-rank - 1..=rank`, negative counting from the end); the
/// same type and quantization.
pub(super) fn check_expand_dims(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, axis] and one output")?;
    let (input, axis, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let values = ctx.const_ints(axis)?;
    let rank = input.tensor.rank();
    let [value] = values.as_slice() else {
        return Err(ctx.shape_err(format!("{axis} must hold one value")));
    };
    let Some(index) = axis_index(*value, rank + 1) else {
        return Err(ctx.bad_options(format!(
            "axis {value} is outside {}..={rank}",
            -(rank as i64) - 1
        )));
    };
    let mut expected = input.shape().to_vec();
    expected.insert(index, 1);
    if output.shape() != expected.as_slice() {
        return Err(ctx.shape_err(format!(
            "{output} should have shape {}",
            ShapeDisplay(&expected)
        )));
    }
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::ExpandDims)
}
