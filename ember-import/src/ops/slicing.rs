//! SLICE, SPLIT, SPLIT_V and UNPACK: parts of the input, each output one `strided_slice`
//! step (the kernel STRIDED_SLICE runs) of the input; and GATHER, parts picked by indices
//! (the `gather` kernel).

use super::layout::{axis_index, dispatch_slice, same_quantization, ANY, ANY_TEXT};
use crate::check::{options, Arg, Ctx};
use crate::element::ElementType::{Float32, Int32, Int64, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind, StridedSliceOptions};
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::gather::Gather;
use ember_kernels::gather_nd::{GatherNd, MAX_INDEX_DEPTH};

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

/// GATHER: input (float32 or int8) and int32 or int64 indices; `axis` (negative counts from
/// the end) and `batch_dims` (negative counts from the indices' rank) as TFLM takes them;
/// the output `input[..axis] + indices[batch_dims..] + input[axis + 1..]` of the input's
/// type and quantization. Constant indices must lie within the axis.
pub(super) fn check_gather(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, indices] and one output")?;
    let options = options!(ctx, GatherOptions);
    let (input, indices, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let (rank, index_rank) = (input.tensor.rank(), indices.tensor.rank());
    let axis = axis_index(i64::from(options.axis), rank)
        .ok_or_else(|| ctx.bad_options(format!("axis {} is outside rank {rank}", options.axis)))?;
    let batch_dims = i64::from(options.batch_dims);
    let batch_dims = if batch_dims < 0 {
        batch_dims + index_rank as i64
    } else {
        batch_dims
    };
    let batch_dims = usize::try_from(batch_dims)
        .ok()
        .filter(|&dims| dims <= axis && dims < rank && dims <= index_rank)
        .ok_or_else(|| {
            ctx.bad_options(format!(
                "batch_dims {} with axis {axis}",
                options.batch_dims
            ))
        })?;
    if input.shape()[..batch_dims] != indices.shape()[..batch_dims] {
        return Err(ctx.shape_err(format!(
            "{input} and {indices} differ in their first {batch_dims} dimensions"
        )));
    }
    if !matches!(indices.ty(), Int32 | Int64) {
        return Err(ctx.type_err(format!("{indices}: supported types are int32, int64")));
    }
    if indices.tensor.is_constant() {
        let axis_size = input.shape()[axis] as i64;
        if let Some(stray) = ctx
            .const_ints(indices)?
            .into_iter()
            .find(|&index| !(0..axis_size).contains(&index))
        {
            return Err(ctx.shape_err(format!(
                "{indices} holds {stray}, outside dimension {axis} of {input}"
            )));
        }
    }
    let mut expected = input.shape()[..axis].to_vec();
    expected.extend_from_slice(&indices.shape()[batch_dims..]);
    expected.extend_from_slice(&input.shape()[axis + 1..]);
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::Gather { axis, batch_dims })
}

/// GATHER_ND: inputs `[input, indices]`, int32 indices whose last dimension (1 to 5, at
/// most the input's rank) indexes the input's leading dimensions; the output the indices'
/// other dimensions then the rest of the input's, of its type (int8, float32) and
/// quantization. Constant indices must name slices inside the input (TFLM's invoke fails
/// otherwise).
pub(super) fn check_gather_nd(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, indices] and one output")?;
    let (input, indices, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    if indices.ty() != Int32 {
        return Err(ctx.type_err(format!("{indices}: supported types are int32")));
    }
    let Some((&depth, rows)) = indices.shape().split_last() else {
        return Err(ctx.shape_err(format!("{indices} must have rank 1 or more")));
    };
    if depth == 0 || depth > input.shape().len() || depth > MAX_INDEX_DEPTH {
        return Err(ctx.shape_err(format!(
            "{indices}: rows of {depth} indices for {input} (1 to {MAX_INDEX_DEPTH}, at most its rank)"
        )));
    }
    let mut expected = rows.to_vec();
    expected.extend_from_slice(&input.shape()[depth..]);
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")?;
    same_quantization(ctx, input, output)?;
    if indices.tensor.is_constant() {
        let params = GatherNd::new(input.ty().size(), input.shape(), indices.shape())
            .map_err(|e| ctx.shape_err(format!("{indices}: {e}")))?;
        let values: Vec<i32> = ctx
            .const_ints(indices)?
            .into_iter()
            .map(|v| v as i32)
            .collect();
        if let Some(row) = values
            .chunks_exact(depth)
            .find(|row| params.slice_start(row).is_none())
        {
            return Err(ctx.shape_err(format!("{indices} holds {row:?}, outside {input}")));
        }
    }
    Ok(OpKind::GatherNd)
}

/// GATHER_ND, int8 or float32, int32 indices.
pub(super) fn lower_gather_nd(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let indices = lowering.input(op, 1)?;
    let graph = lowering.graph;
    let params = GatherNd::new(
        lowering.element_type(input).size(),
        &graph.tensor(input).shape,
        &graph.tensor(indices).shape,
    )
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, indices, op.outputs[0]]);
    Ok(())
}

/// GATHER, int8 or float32, int32 indices.
pub(super) fn lower_gather(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Gather { axis, batch_dims } = op.kind else {
        return Err(lowering.invalid(op, "not a GATHER".into()));
    };
    let input = lowering.input(op, 0)?;
    let indices = lowering.input(op, 1)?;
    if lowering.element_type(indices) != Int32 {
        return Err(lowering.unsupported(op, "GATHER with int64 indices".into()));
    }
    let output = op.outputs[0];
    let shape = &lowering.graph.tensor(input).shape;
    let index_shape = &lowering.graph.tensor(indices).shape;
    let product = |dims: &[usize]| dims.iter().product::<usize>();
    let params = Gather {
        elem_bytes: lowering.element_type(input).size(),
        batches: product(&shape[..batch_dims]),
        outer: product(&shape[batch_dims..axis]),
        axis_size: shape[axis],
        inner: product(&shape[axis + 1..]),
        coords: product(&index_shape[batch_dims..]),
    }
    .validate()
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, indices, output]);
    Ok(())
}
