//! RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: an NHWC tensor's height and width
//! resized, each output pixel a copy of one input pixel, or interpolated between four.

use super::layout::same_quantization;
use crate::check::{options, Ctx};
use crate::element::ElementType::{self, Float32, Int16, Int32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::ImportError;
use ember_kernels::resize_bilinear::{ResizeBilinear, ResizeBilinearF32, ResizeBilinearS8};
use ember_kernels::resize_nearest_neighbor::ResizeNearestNeighbor;

/// What both resizes take: inputs `[input, size]` and one output; a rank-4 input, a
/// constant int32 size `[height, width]` (each at least 1), the output `[batches, height,
/// width, channels]` of the input's type (one of `types`, named by `type_names`) and
/// quantization.
fn check_resize(
    ctx: &Ctx<'_, '_>,
    types: &[ElementType],
    type_names: &'static str,
) -> Result<(), ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, size] and one output")?;
    let (input, size, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    ctx.rank(input, 4)?;
    if size.ty() != Int32 {
        return Err(ctx.type_err(format!("{size} must be int32")));
    }
    let values = ctx.const_ints(size)?;
    let &[height, width] = values.as_slice() else {
        return Err(ctx.shape_err(format!("{size} must hold [height, width]")));
    };
    let (Ok(height @ 1..), Ok(width @ 1..)) = (usize::try_from(height), usize::try_from(width))
    else {
        return Err(ctx.shape_err(format!("{size}: sizes {values:?} must be positive")));
    };
    let shape = input.shape();
    ctx.shape_is(output, &[shape[0], height, width, shape[3]])?;
    ctx.same_type(&[input, output], types, type_names)?;
    same_quantization(ctx, input, output)
}

/// RESIZE_NEAREST_NEIGHBOR: [`check_resize`] over float32, int8 or int16.
pub(super) fn check_resize_nearest_neighbor(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let options = options!(ctx, ResizeNearestNeighborOptions);
    check_resize(ctx, &[Float32, Int8, Int16], "float32, int8, int16")?;
    Ok(OpKind::ResizeNearestNeighbor {
        align_corners: options.align_corners,
        half_pixel_centers: options.half_pixel_centers,
    })
}

/// RESIZE_NEAREST_NEIGHBOR, int8 or float32.
pub(super) fn lower_resize_nearest_neighbor(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::ResizeNearestNeighbor {
        align_corners,
        half_pixel_centers,
    } = op.kind
    else {
        return Err(lowering.invalid(op, "not a RESIZE_NEAREST_NEIGHBOR".into()));
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let (in_shape, out_shape) = (
        &lowering.graph.tensor(input).shape,
        &lowering.graph.tensor(output).shape,
    );
    let params = ResizeNearestNeighbor {
        elem_bytes: lowering.element_type(input).size(),
        batches: in_shape[0],
        input_height: in_shape[1],
        input_width: in_shape[2],
        depth: in_shape[3],
        output_height: out_shape[1],
        output_width: out_shape[2],
        align_corners,
        half_pixel_centers,
    }
    .validate()
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// RESIZE_BILINEAR: [`check_resize`] over float32 or int8 (TFLM interpolates the raw int8
/// values); `align_corners` and `half_pixel_centers` not both set (TFLM refuses them
/// together).
pub(super) fn check_resize_bilinear(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let options = options!(ctx, ResizeBilinearOptions);
    if options.align_corners && options.half_pixel_centers {
        return Err(ctx.bad_options("align_corners and half_pixel_centers are both set"));
    }
    check_resize(ctx, &[Float32, Int8], "float32, int8")?;
    Ok(OpKind::ResizeBilinear {
        align_corners: options.align_corners,
        half_pixel_centers: options.half_pixel_centers,
    })
}

/// RESIZE_BILINEAR, int8 (`resize_bilinear_s8`) or float32 (`resize_bilinear_f32`).
pub(super) fn lower_resize_bilinear(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::ResizeBilinear {
        align_corners,
        half_pixel_centers,
    } = op.kind
    else {
        return Err(lowering.invalid(op, "not a RESIZE_BILINEAR".into()));
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let (in_shape, out_shape) = (
        &lowering.graph.tensor(input).shape,
        &lowering.graph.tensor(output).shape,
    );
    let shape = ResizeBilinear {
        batches: in_shape[0],
        input_height: in_shape[1],
        input_width: in_shape[2],
        depth: in_shape[3],
        output_height: out_shape[1],
        output_width: out_shape[2],
        align_corners,
        half_pixel_centers,
    };
    if lowering.element_type(input) == Int8 {
        let params = ResizeBilinearS8::new(shape).map_err(kernel_error(op))?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let params = ResizeBilinearF32::new(shape).map_err(kernel_error(op))?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}
