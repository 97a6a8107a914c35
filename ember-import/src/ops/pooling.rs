//! AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D: a window over each channel of an NHWC
//! input.

use crate::check::{dims4, hw, options, padding, spatial, Ctx};
use crate::element::ElementType::{Float32, Int16, Int8};
use crate::lowering::{kernel_activation, kernel_error, window, LowerError, Lowering};
use crate::op::{Hw, Op, OpKind, Pool2dOptions};
use crate::ImportError;
use ember_kernels::pooling::{
    AveragePool2dF32, AveragePool2dS8, L2Pool2dF32, MaxPool2dF32, MaxPool2dS8, Pool2dShape,
};

/// AVERAGE_POOL_2D: see [`check_pool2d`].
pub(super) fn check_average_pool2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_pool2d(ctx).map(OpKind::AveragePool2d)
}

/// MAX_POOL_2D: see [`check_pool2d`].
pub(super) fn check_max_pool2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_pool2d(ctx).map(OpKind::MaxPool2d)
}

/// L2_POOL_2D: see [`check_pool2d`]; float32 alone, as TFLM takes it.
pub(super) fn check_l2_pool2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let pool = check_pool2d(ctx)?;
    ctx.same_type(&[ctx.input(0)?], &[Float32], "float32")?;
    Ok(OpKind::L2Pool2d(pool))
}

/// AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D: input NHWC, output `[N, out_h, out_w, C]`, the same type
/// and quantization.
fn check_pool2d(ctx: &Ctx<'_, '_>) -> Result<Pool2dOptions, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let options = options!(ctx, Pool2DOptions);
    let pool = Pool2dOptions {
        padding: padding(options.padding),
        stride: hw(
            ctx,
            ["stride_h", "stride_w"],
            options.stride_h,
            options.stride_w,
        )?,
        filter: hw(
            ctx,
            ["filter_height", "filter_width"],
            options.filter_height,
            options.filter_width,
        )?,
        activation: ctx.activation(options.fused_activation_function)?,
    };
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.rank(input, 4)?;
    let [batches, height, width, channels] = dims4(input);
    let out_height = spatial(
        ctx,
        "height",
        pool.padding,
        height,
        pool.filter.h,
        pool.stride.h,
        1,
    )?;
    let out_width = spatial(
        ctx,
        "width",
        pool.padding,
        width,
        pool.filter.w,
        pool.stride.w,
        1,
    )?;
    ctx.shape_is(output, &[batches, out_height, out_width, channels])?;
    let ty = ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
        if input.tensor.quantization != output.tensor.quantization {
            return Err(ctx.type_err(format!("{output} is quantized differently from {input}")));
        }
    }
    Ok(pool)
}

/// AVERAGE_POOL_2D, int8 or float32.
pub(super) fn lower_average_pool2d(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::AveragePool2d(pool) = &op.kind else {
        return Err(lowering.invalid(op, "not an AVERAGE_POOL_2D".into()));
    };
    lower_pool2d(lowering, op, pool, Pooling::Average)
}

/// MAX_POOL_2D, int8 or float32.
pub(super) fn lower_max_pool2d(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::MaxPool2d(pool) = &op.kind else {
        return Err(lowering.invalid(op, "not a MAX_POOL_2D".into()));
    };
    lower_pool2d(lowering, op, pool, Pooling::Max)
}

/// L2_POOL_2D, float32.
pub(super) fn lower_l2_pool2d(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::L2Pool2d(pool) = &op.kind else {
        return Err(lowering.invalid(op, "not an L2_POOL_2D".into()));
    };
    lower_pool2d(lowering, op, pool, Pooling::L2)
}

/// Which pool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Average,
    Max,
    L2,
}

fn lower_pool2d(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    pool: &Pool2dOptions,
    pooling: Pooling,
) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let input_shape = lowering.graph.tensor(input).shape.clone();
    let output_shape = lowering.graph.tensor(output).shape.clone();
    if input_shape.len() != 4 || output_shape.len() != 4 {
        return Err(lowering.invalid(op, "needs 4-D input and output".into()));
    }
    let pool_window = window(
        pool.padding,
        pool.stride,
        Hw { h: 1, w: 1 },
        &input_shape,
        (pool.filter.h, pool.filter.w),
    );
    let shape = Pool2dShape {
        batches: input_shape[0],
        input_height: input_shape[1],
        input_width: input_shape[2],
        depth: input_shape[3],
        output_height: output_shape[1],
        output_width: output_shape[2],
        filter_height: pool.filter.h,
        filter_width: pool.filter.w,
        stride_height: pool.stride.h,
        stride_width: pool.stride.w,
        pad_height: pool_window.pad_height,
        pad_width: pool_window.pad_width,
    };
    let tensors = [input, output];
    if lowering.element_type(input) == Int8 {
        let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
        let (act_min, act_max) = kernel_activation(pool.activation)
            .range_s8(output_scale, output_zero_point)
            .map_err(kernel)?;
        match pooling {
            Pooling::Average => {
                let params = AveragePool2dS8 {
                    shape,
                    act_min,
                    act_max,
                };
                lowering.dispatch_params(&params, &tensors);
            }
            Pooling::Max => {
                let params = MaxPool2dS8 {
                    shape,
                    act_min,
                    act_max,
                };
                lowering.dispatch_params(&params, &tensors);
            }
            Pooling::L2 => return Err(lowering.invalid(op, "int8 L2_POOL_2D".into())),
        }
    } else {
        let (act_min, act_max) = kernel_activation(pool.activation).range_f32();
        match pooling {
            Pooling::Average => {
                let params = AveragePool2dF32 {
                    shape,
                    act_min,
                    act_max,
                };
                lowering.dispatch_params(&params, &tensors);
            }
            Pooling::Max => {
                let params = MaxPool2dF32 {
                    shape,
                    act_min,
                    act_max,
                };
                lowering.dispatch_params(&params, &tensors);
            }
            Pooling::L2 => {
                let params = L2Pool2dF32 {
                    shape,
                    act_min,
                    act_max,
                };
                lowering.dispatch_params(&params, &tensors);
            }
        }
    }
    Ok(())
}
