//! PACK, DEPTH_TO_SPACE and SPACE_TO_DEPTH: the input's values in a new order, lowered
//! exactly onto kernels the layout ops have: PACK is a CONCATENATION of inputs that each
//! hold 1 along the new dimension; DEPTH_TO_SPACE and SPACE_TO_DEPTH are one TRANSPOSE of
//! the input read as six dimensions (`[n, h, w, b, b, c]` and `[n, h, b, w, b, c]`).

use super::layout::{axis_index, dispatch_concatenation, same_quantization, ANY, ANY_TEXT};
use crate::check::{options, Ctx};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::tensor::{ShapeDisplay, TensorId};
use crate::ImportError;
use ember_kernels::transpose::Transpose;

/// PACK: `values_count` inputs of one shape, type and quantization, stacked along a new
/// dimension `axis` (in `-rank - 1..=rank`) of the output.
pub(super) fn check_pack(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let count = ctx.input_count();
    ctx.arity(
        1..=usize::MAX,
        count,
        1,
        "one or more inputs and one output",
    )?;
    let options = options!(ctx, PackOptions);
    if usize::try_from(options.values_count).ok() != Some(count) {
        return Err(ctx.bad_options(format!(
            "values_count {} with {count} inputs",
            options.values_count
        )));
    }
    let (first, output) = (ctx.input(0)?, ctx.output(0)?);
    let rank = first.tensor.rank();
    let axis = axis_index(i64::from(options.axis), rank + 1).ok_or_else(|| {
        ctx.bad_options(format!(
            "axis {} is outside rank {}",
            options.axis,
            rank + 1
        ))
    })?;
    for slot in 0..count {
        let input = ctx.input(slot)?;
        ctx.shape_is(input, first.shape())?;
        ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
        same_quantization(ctx, input, output)?;
    }
    let mut expected = first.shape().to_vec();
    expected.insert(axis, count);
    ctx.shape_is(output, &expected)?;
    Ok(OpKind::Pack { axis })
}

/// DEPTH_TO_SPACE and SPACE_TO_DEPTH: NHWC input and output of one type and quantization,
/// `block_size` at least 1, the output's shape the rearranged input's.
fn check_block(ctx: &Ctx<'_, '_>, block: i32, to_space: bool) -> Result<usize, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.rank(input, 4)?;
    let block = usize::try_from(block)
        .ok()
        .filter(|&block| block >= 1)
        .ok_or_else(|| ctx.bad_options(format!("block_size {block}")))?;
    let &[batch, height, width, depth] = input.shape() else {
        return Err(ctx.shape_err(format!("{input} must have rank 4")));
    };
    let expected = if to_space {
        if depth % (block * block) != 0 {
            return Err(ctx.shape_err(format!("{input}: depth is not a multiple of {block}²")));
        }
        [
            batch,
            height * block,
            width * block,
            depth / (block * block),
        ]
    } else {
        if height % block != 0 || width % block != 0 {
            return Err(ctx.shape_err(format!(
                "{input}: height and width are not multiples of {block}"
            )));
        }
        [batch, height / block, width / block, depth * block * block]
    };
    if output.shape() != expected {
        return Err(ctx.shape_err(format!(
            "{output} should have shape {}",
            ShapeDisplay(&expected)
        )));
    }
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(block)
}

/// DEPTH_TO_SPACE: `output[n, h·b + i, w·b + j, c] = input[n, h, w, (i·b + j)·C + c]`.
pub(super) fn check_depth_to_space(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let block = options!(ctx, DepthToSpaceOptions).block_size;
    check_block(ctx, block, true).map(|block| OpKind::DepthToSpace { block })
}

/// SPACE_TO_DEPTH: `output[n, h, w, (i·b + j)·C + c] = input[n, h·b + i, w·b + j, c]`.
pub(super) fn check_space_to_depth(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let block = options!(ctx, SpaceToDepthOptions).block_size;
    check_block(ctx, block, false).map(|block| OpKind::SpaceToDepth { block })
}

/// PACK: a concatenation of the inputs, 1 each along the new dimension.
pub(super) fn lower_pack(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Pack { axis } = op.kind else {
        return Err(lowering.invalid(op, "not a PACK".into()));
    };
    let inputs: Vec<TensorId> = op.inputs.iter().flatten().copied().collect();
    let element = lowering.element_type(inputs[0]);
    let sizes = vec![1; inputs.len()];
    dispatch_concatenation(lowering, op, &inputs, op.outputs[0], element, &sizes, axis)
}

/// DEPTH_TO_SPACE and SPACE_TO_DEPTH: one transpose of six dimensions, swapping the middle
/// two (`[n, h, w, b, b, c]` to `[n, h, b, w, b, c]`, and back).
pub(super) fn lower_block(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let &[batch, height, width, depth] = lowering.graph.tensor(input).shape.as_slice() else {
        return Err(lowering.invalid(op, "not of rank 4".into()));
    };
    let six = match op.kind {
        OpKind::DepthToSpace { block } => {
            [batch, height, width, block, block, depth / (block * block)]
        }
        OpKind::SpaceToDepth { block } => {
            [batch, height / block, block, width / block, block, depth]
        }
        _ => return Err(lowering.invalid(op, "not DEPTH_TO_SPACE or SPACE_TO_DEPTH".into())),
    };
    let element = lowering.element_type(input).size();
    let params = Transpose::new(element, &six, &[0, 1, 3, 2, 4, 5]).map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}
