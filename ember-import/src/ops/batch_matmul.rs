//! BATCH_MATMUL: a matrix product over broadcast batch dimensions, as TFLM's
//! `batch_matmul.cc` runs it: `lhs` `[…, rows, depth]` (`[…, depth, rows]` with `adj_x`)
//! times `rhs` `[…, depth, cols]` (`[…, cols, depth]` with `adj_y`), ranks 2 to 5, either
//! operand a constant or computed. int8 per tensor (any zero points, one multiplier, no
//! fused activation) or float32; TFLM's int16 is refused at lowering.

use crate::check::{options, Ctx};
use crate::element::ElementType::{Float32, Int16, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::quantization::Quantization;
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::batch_matmul::{BatchMatmulF32, BatchMatmulS8, BatchMatmulShape};

/// BATCH_MATMUL: inputs `[lhs, rhs]` and one output, all of one type (float32, int8 or
/// int16, as TFLM: no hybrid, no int32 output), quantized per tensor (int16 with zero
/// points 0, as TFLM); ranks 2 to 5; batch dimensions that broadcast, summed dimensions
/// that agree and the output's shape the product's (TFLM rewrites it; a model whose output
/// tensor says otherwise is refused here).
pub(super) fn check_batch_matmul(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [lhs, rhs] and one output")?;
    let options = options!(ctx, BatchMatMulOptions);
    let (adj_x, adj_y) = (options.adj_x, options.adj_y);
    let (lhs, rhs, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let ty = ctx.same_type(
        &[lhs, rhs, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        for arg in [lhs, rhs, output] {
            ctx.per_tensor(arg)?;
            if ty == Int16 {
                if let Some(Quantization::PerTensor { zero_point, .. }) = &arg.tensor.quantization {
                    if *zero_point != 0 {
                        return Err(ctx.type_err(format!("{arg}: int16 needs zero point 0")));
                    }
                }
            }
        }
    }
    for arg in [lhs, rhs] {
        if !(2..=5).contains(&arg.shape().len()) {
            return Err(ctx.shape_err(format!("{arg} must have rank 2 to 5")));
        }
    }
    let shape = BatchMatmulShape::new(lhs.shape(), rhs.shape(), adj_x, adj_y).map_err(|_| {
        ctx.shape_err(format!(
            "{lhs} and {rhs} do not multiply (adj_x={adj_x} adj_y={adj_y}): their summed \
             dimensions differ or their batch dimensions do not broadcast"
        ))
    })?;
    let (dims, rank) = shape.output_shape(lhs.shape().len(), rhs.shape().len());
    let expected = &dims[dims.len() - rank..];
    if output.shape() != expected {
        return Err(ctx.shape_err(format!(
            "{output} should have shape {}",
            ShapeDisplay(expected)
        )));
    }
    Ok(OpKind::BatchMatmul { adj_x, adj_y })
}

/// BATCH_MATMUL, int8 (`batch_matmul_s8`: TFLM's multiplier of the three scales) or float32
/// (`batch_matmul_f32`); the adjoint operands read in place (no transpose step).
pub(super) fn lower_batch_matmul(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::BatchMatmul { adj_x, adj_y } = op.kind else {
        return Err(lowering.invalid(op, "not a BATCH_MATMUL".into()));
    };
    let lhs = lowering.input(op, 0)?;
    let rhs = lowering.input(op, 1)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let shape = BatchMatmulShape::new(
        &graph.tensor(lhs).shape,
        &graph.tensor(rhs).shape,
        adj_x,
        adj_y,
    )
    .map_err(kernel)?;
    let tensors = [lhs, rhs, output];
    if lowering.element_type(lhs) == Int8 {
        let params = BatchMatmulS8::prepare(
            shape,
            lowering.per_tensor(op, lhs)?,
            lowering.per_tensor(op, rhs)?,
            lowering.per_tensor(op, output)?,
        )
        .map_err(kernel)?;
        lowering.dispatch_params(&params, &tensors);
    } else {
        lowering.dispatch_params(&BatchMatmulF32 { shape }, &tensors);
    }
    Ok(())
}
