//! SLICE, SPLIT, SPLIT_V and UNPACK: parts of the input, each output one `strided_slice`
//! step (the kernel STRIDED_SLICE runs) of the input.

use super::layout::{axis_index, dispatch_slice, same_quantization, ANY, ANY_TEXT};
use crate::check::{options, Arg, Ctx};
use crate::lowering::{LowerError, Lowering};
use crate::op::{Op, OpKind, StridedSliceOptions};
use crate::tensor::ShapeDisplay;
use crate::ImportError;

/// SLICE: `begin` and `size` constants of one value per input dimension (a size of -1 runs
/// to the end), within the input; the output has the sizes.
pub(super) fn check_slice(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(3..=3, 3, 1, "inputs [input, begin, size] and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let (begin_arg, size_arg) = (ctx.input(1)?, ctx.input(2)?);
    let (begin, size) = (ctx.const_ints(begin_arg)?, ctx.const_ints(size_arg)?);
    if begin.len() != rank || size.len() != rank {
        return Err(ctx.shape_err(format!(
            "{begin_arg} and {size_arg} must hold {rank} values each"
        )));
    }
    let mut slice = StridedSliceOptions {
        begin: Vec::with_capacity(rank),
        end: Vec::with_capacity(rank),
        strides: vec![1; rank],
        shrink: vec![false; rank],
    };
    let mut expected = Vec::with_capacity(rank);
    for (index, &dim) in input.shape().iter().enumerate() {
        let dim = dim as i64;
        let (start, length) = (begin[index], size[index]);
        let length = if length == -1 { dim - start } else { length };
        if start < 0 || length < 0 || start.checked_add(length).is_none_or(|end| end > dim) {
            return Err(ctx.shape_err(format!(
                "dimension {index}: begin {} and size {} leave 0..{dim}",
                begin[index], size[index]
            )));
        }
        slice.begin.push(start);
        slice.end.push(start + length);
        expected.push(length as usize);
    }
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::Slice(slice))
}

/// The split dimension from a constant scalar, negative counting from the end.
fn split_axis(ctx: &Ctx<'_, '_>, axis: Arg<'_, '_>, rank: usize) -> Result<usize, ImportError> {
    let values = ctx.const_ints(axis)?;
    let [value] = values.as_slice() else {
        return Err(ctx.shape_err(format!("{axis} must hold one value")));
    };
    axis_index(*value, rank)
        .ok_or_else(|| ctx.bad_options(format!("axis {value} is outside rank {rank}")))
}

/// Each output is the input with `sizes[i]` along `axis`, of its type and quantization.
fn check_parts(
    ctx: &Ctx<'_, '_>,
    input: Arg<'_, '_>,
    axis: usize,
    sizes: &[usize],
) -> Result<(), ImportError> {
    for (slot, &size) in sizes.iter().enumerate() {
        let output = ctx.output(slot)?;
        let mut expected = input.shape().to_vec();
        expected[axis] = size;
        ctx.shape_is(output, &expected)?;
        ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
        same_quantization(ctx, input, output)?;
    }
    Ok(())
}

/// SPLIT: inputs `[axis, input]`; `num_splits` outputs (the option, and the op's outputs)
/// of equal size along the axis, which they divide.
pub(super) fn check_split(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let parts = ctx.raw.outputs.len();
    ctx.arity(
        2..=2,
        2,
        parts.max(1),
        "inputs [axis, input] and num_splits outputs",
    )?;
    let num_splits = options!(ctx, SplitOptions).num_splits;
    let input = ctx.input(1)?;
    let axis = split_axis(ctx, ctx.input(0)?, input.tensor.rank())?;
    let dim = input.shape()[axis];
    if usize::try_from(num_splits).ok() != Some(parts) || dim % parts != 0 {
        return Err(ctx.bad_options(format!(
            "num_splits {num_splits} with {parts} outputs does not divide dimension {axis} \
             ({dim}) of {input}"
        )));
    }
    check_parts(ctx, input, axis, &vec![dim / parts; parts])?;
    Ok(OpKind::Split { axis })
}

/// SPLIT_V: inputs `[input, size_splits, axis]`; one output per size (at most one -1,
/// the rest of the dimension), the sizes adding up to the dimension.
pub(super) fn check_split_v(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let parts = ctx.raw.outputs.len();
    ctx.arity(
        3..=3,
        3,
        parts.max(1),
        "inputs [input, size_splits, axis] and one output per size",
    )?;
    let input = ctx.input(0)?;
    let axis = split_axis(ctx, ctx.input(2)?, input.tensor.rank())?;
    let dim = input.shape()[axis] as i64;
    let size_arg = ctx.input(1)?;
    let mut sizes = ctx.const_ints(size_arg)?;
    let wildcards = sizes.iter().filter(|&&size| size == -1).count();
    let known: i64 = sizes.iter().filter(|&&size| size != -1).sum();
    if let Some(size) = sizes.iter_mut().find(|size| **size == -1) {
        *size = dim - known;
    }
    let sum: i64 = sizes.iter().sum();
    if sizes.len() != parts || wildcards > 1 || sizes.iter().any(|&size| size < 0) || sum != dim {
        return Err(ctx.shape_err(format!(
            "{size_arg} does not split dimension {axis} ({dim}) of {input} into {parts} parts"
        )));
    }
    let sizes: Vec<usize> = sizes.iter().map(|&size| size as usize).collect();
    check_parts(ctx, input, axis, &sizes)?;
    Ok(OpKind::SplitV { axis })
}

/// UNPACK: `num` outputs (the dimension's size), each the input at one index along `axis`
/// with that dimension dropped.
pub(super) fn check_unpack(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let parts = ctx.raw.outputs.len();
    ctx.arity(1..=1, 1, parts.max(1), "one input and one output per index")?;
    let options = options!(ctx, UnpackOptions);
    let input = ctx.input(0)?;
    let rank = input.tensor.rank();
    let axis = axis_index(i64::from(options.axis), rank)
        .ok_or_else(|| ctx.bad_options(format!("axis {} is outside rank {rank}", options.axis)))?;
    if input.shape()[axis] != parts || usize::try_from(options.num).ok() != Some(parts) {
        return Err(ctx.shape_err(format!(
            "num {} with {parts} outputs is not dimension {axis} of {input}",
            options.num
        )));
    }
    let mut expected = input.shape().to_vec();
    expected.remove(axis);
    for slot in 0..parts {
        let output = ctx.output(slot)?;
        if output.shape() != expected.as_slice() {
            return Err(ctx.shape_err(format!(
                "{output} should have shape {}",
                ShapeDisplay(&expected)
            )));
        }
        ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
        same_quantization(ctx, input, output)?;
    }
    Ok(OpKind::Unpack { axis })
}

/// SLICE: one slice step.
pub(super) fn lower_slice(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Slice(slice) = &op.kind else {
        return Err(lowering.invalid(op, "not a SLICE".into()));
    };
    let input = lowering.input(op, 0)?;
    dispatch_slice(lowering, op, input, op.outputs[0], slice)
}

/// SPLIT, SPLIT_V and UNPACK: one slice step per output, each the next run of the input
/// along the axis (UNPACK's of one index, its dimension shrunk away).
pub(super) fn lower_parts(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let (input_slot, axis, shrink) = match op.kind {
        OpKind::Split { axis } => (1, axis, false),
        OpKind::SplitV { axis } => (0, axis, false),
        OpKind::Unpack { axis } => (0, axis, true),
        _ => return Err(lowering.invalid(op, "not a SPLIT, SPLIT_V or UNPACK".into())),
    };
    let input = lowering.input(op, input_slot)?;
    let shape = lowering.graph.tensor(input).shape.clone();
    let rank = shape.len();
    let mut start = 0;
    for &output in &op.outputs {
        let size = if shrink {
            1
        } else {
            lowering.graph.tensor(output).shape[axis]
        };
        let mut slice = StridedSliceOptions {
            begin: vec![0; rank],
            end: shape.iter().map(|&dim| dim as i64).collect(),
            strides: vec![1; rank],
            shrink: vec![false; rank],
        };
        slice.begin[axis] = start as i64;
        slice.end[axis] = (start + size) as i64;
        slice.shrink[axis] = shrink;
        dispatch_slice(lowering, op, input, output, &slice)?;
        start += size;
    }
    Ok(())
}
