//! SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND on NHWC (rank 4) or `[batch, width, channels]`
//! (rank 3) tensors, int8 or float32 as TFLM takes them: one `space_batch` dispatch each.

use super::layout::same_quantization;
use crate::check::Ctx;
use crate::element::ElementType::{Float32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::ImportError;
use ember_kernels::space_batch::SpaceBatch;

/// A block (one size per spatial dimension) and its `(before, after)` paddings or crops.
type BlockAndPairs = (Vec<usize>, Vec<(usize, usize)>);

/// The block and its `(before, after)` paddings or crops, checked: a constant block of one
/// positive size per spatial dimension (rank - 2 of them) and a constant `[spatial, 2]` of
/// non-negative pairs.
fn block_and_pairs(ctx: &Ctx<'_, '_>) -> Result<BlockAndPairs, ImportError> {
    let (input, block, pairs) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let rank = input.shape().len();
    if !(3..=4).contains(&rank) {
        return Err(ctx.shape_err(format!("{input} must have rank 3 or 4")));
    }
    let spatial = rank - 2;
    let positive = |value: i64| usize::try_from(value).ok().filter(|&v| v >= 1);
    let sizes: Option<Vec<usize>> = ctx.const_ints(block)?.into_iter().map(positive).collect();
    let sizes = sizes
        .filter(|sizes| sizes.len() == spatial && block.shape() == [spatial])
        .ok_or_else(|| ctx.shape_err(format!("{block} must hold {spatial} positive sizes")))?;
    let values = ctx.const_ints(pairs)?;
    let pairs_ok = pairs.shape() == [spatial, 2] && values.iter().all(|&v| v >= 0);
    if !pairs_ok {
        return Err(ctx.shape_err(format!(
            "{pairs} must be a [{spatial}, 2] of non-negative values"
        )));
    }
    let pairs = values
        .chunks_exact(2)
        .map(|pair| (pair[0] as usize, pair[1] as usize))
        .collect();
    ctx.same_type(&[input, ctx.output(0)?], &[Float32, Int8], "float32, int8")?;
    same_quantization(ctx, input, ctx.output(0)?)?;
    Ok((sizes, pairs))
}

/// SPACE_TO_BATCH_ND: inputs `[input, block_shape, paddings]`; each padded spatial
/// dimension a multiple of its block; the output `[batch × blocks, padded / block…, c]`.
pub(super) fn check_space_to_batch_nd(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        3..=3,
        3,
        1,
        "inputs [input, block_shape, paddings] and one output",
    )?;
    let (block, pads) = block_and_pairs(ctx)?;
    let input = ctx.input(0)?;
    let shape = input.shape();
    let mut expected = vec![shape[0] * block.iter().product::<usize>()];
    for (index, (&size, &(before, after))) in block.iter().zip(&pads).enumerate() {
        let padded = shape[1 + index] + before + after;
        if padded % size != 0 {
            return Err(ctx.shape_err(format!(
                "{input}: dimension {} padded to {padded}, not a multiple of the block {size}",
                1 + index
            )));
        }
        expected.push(padded / size);
    }
    expected.push(shape[shape.len() - 1]);
    ctx.shape_is(ctx.output(0)?, &expected)?;
    Ok(OpKind::SpaceToBatchNd { block, pads })
}

/// BATCH_TO_SPACE_ND: inputs `[input, block_shape, crops]`; the batch a multiple of the
/// blocks, the crops within the grown dimensions; the output `[batch / blocks, grown -
/// crops…, c]`.
pub(super) fn check_batch_to_space_nd(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        3..=3,
        3,
        1,
        "inputs [input, block_shape, crops] and one output",
    )?;
    let (block, crops) = block_and_pairs(ctx)?;
    let input = ctx.input(0)?;
    let shape = input.shape();
    let blocks: usize = block.iter().product();
    if shape[0] % blocks != 0 {
        return Err(ctx.shape_err(format!(
            "{input}: batch {} is not a multiple of the block's {blocks}",
            shape[0]
        )));
    }
    let mut expected = vec![shape[0] / blocks];
    for (index, (&size, &(before, after))) in block.iter().zip(&crops).enumerate() {
        let grown = shape[1 + index] * size;
        let Some(cropped) = grown.checked_sub(before + after).filter(|&c| c >= 1) else {
            return Err(ctx.shape_err(format!(
                "{input}: crops ({before}, {after}) leave nothing of dimension {}",
                1 + index
            )));
        };
        expected.push(cropped);
    }
    expected.push(shape[shape.len() - 1]);
    ctx.shape_is(ctx.output(0)?, &expected)?;
    Ok(OpKind::BatchToSpaceNd { block, crops })
}

/// A rank-3 shape as NHWC with a height of 1; a rank-4 one as it is.
fn nhwc(shape: &[usize]) -> [usize; 4] {
    match *shape {
        [batch, width, depth] => [batch, 1, width, depth],
        [batch, height, width, depth] => [batch, height, width, depth],
        _ => [0; 4],
    }
}

/// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND. The padding is raw zero bytes (0.0 for
/// float32, the integer 0 for int8) as TFLM pads: its `SpaceToBatchParams::output_offset`,
/// the pad value, is never set, and its arena starts zeroed. (TensorFlow Lite pads int8 with
/// the zero point instead.)
pub(super) fn lower_space_batch(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let (to_batch, block, pairs) = match &op.kind {
        OpKind::SpaceToBatchNd { block, pads } => (true, block, pads),
        OpKind::BatchToSpaceNd { block, crops } => (false, block, crops),
        _ => return Err(lowering.invalid(op, "not SPACE_TO_BATCH_ND or BATCH_TO_SPACE_ND".into())),
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let element = lowering.element_type(input);
    let pad_byte = 0;
    // A rank-3 tensor's one spatial dimension is the width.
    let (block, before) = match (block.as_slice(), pairs.as_slice()) {
        ([width], [(left, _)]) => ([1, *width], [0, *left]),
        ([height, width], [(top, _), (left, _)]) => ([*height, *width], [*top, *left]),
        _ => return Err(lowering.invalid(op, "a block of one or two dimensions".into())),
    };
    let graph = lowering.graph;
    let params = SpaceBatch {
        elem_bytes: element.size(),
        to_batch,
        pad_byte,
        input: nhwc(&graph.tensor(input).shape),
        output: nhwc(&graph.tensor(output).shape),
        block,
        before,
    }
    .validate()
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::nhwc;

    #[test]
    fn rank_three_is_a_row() {
        assert_eq!(nhwc(&[2, 5, 3]), [2, 1, 5, 3]);
        assert_eq!(nhwc(&[1, 2, 3, 4]), [1, 2, 3, 4]);
    }
}
