//! CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D: NHWC spatial ops.

use super::{check_bias, dims4, hw, options, padding, spatial, weights_types, Ctx};
use crate::{
    Conv2dOptions, DepthwiseConv2dOptions, ElementType, ImportError, OpKind, Pool2dOptions,
};

const WEIGHTED: &str = "inputs [input, weights, bias?] and one output";

/// CONV_2D: input NHWC, weights OHWI with I = the input's channels, bias [O], output
/// `[N, out_h, out_w, O]`.
pub(super) fn conv2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, WEIGHTED)?;
    let o = options!(ctx, Conv2DOptions);
    let opts = Conv2dOptions {
        padding: padding(o.padding),
        stride: hw(ctx, ["stride_h", "stride_w"], o.stride_h, o.stride_w)?,
        dilation: hw(
            ctx,
            ["dilation_h_factor", "dilation_w_factor"],
            o.dilation_h_factor,
            o.dilation_w_factor,
        )?,
        activation: ctx.activation(o.fused_activation_function)?,
    };
    let (input, weights, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt_input(2),
        ctx.output(0)?,
    );
    for a in [input, weights, output] {
        ctx.rank(a, 4)?;
    }
    let [n, h, w, c] = dims4(input);
    let [oc, kh, kw, ic] = dims4(weights);
    if ic != c {
        return Err(ctx.shape_err(format!(
            "{weights} (OHWI) has {ic} input channels but {input} has {c}"
        )));
    }
    check_bias(ctx, bias, oc)?;
    let out_h = spatial(
        ctx,
        "height",
        opts.padding,
        h,
        kh,
        opts.stride.h,
        opts.dilation.h,
    )?;
    let out_w = spatial(
        ctx,
        "width",
        opts.padding,
        w,
        kw,
        opts.stride.w,
        opts.dilation.w,
    )?;
    ctx.shape_is(output, &[n, out_h, out_w, oc])?;
    weights_types(ctx, input, weights, bias, output, 0, o.quantized_bias_type)?;
    Ok(OpKind::Conv2d(opts))
}

/// DEPTHWISE_CONV_2D: input NHWC, weights `[1, KH, KW, C × multiplier]`, bias
/// `[C × multiplier]`, output `[N, out_h, out_w, C × multiplier]`.
pub(super) fn depthwise_conv2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, WEIGHTED)?;
    let o = options!(ctx, DepthwiseConv2DOptions);
    let padding = padding(o.padding);
    let stride = hw(ctx, ["stride_h", "stride_w"], o.stride_h, o.stride_w)?;
    let dilation = hw(
        ctx,
        ["dilation_h_factor", "dilation_w_factor"],
        o.dilation_h_factor,
        o.dilation_w_factor,
    )?;
    let activation = ctx.activation(o.fused_activation_function)?;
    let (input, weights, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt_input(2),
        ctx.output(0)?,
    );
    for a in [input, weights, output] {
        ctx.rank(a, 4)?;
    }
    let [n, h, w, c] = dims4(input);
    let [one, kh, kw, oc] = dims4(weights);
    if one != 1 {
        return Err(ctx.shape_err(format!("{weights} (1HWC) should have dimension 0 of 1")));
    }
    if oc % c != 0 {
        return Err(ctx.shape_err(format!(
            "{weights} has {oc} channels, not a multiple of the {c} of {input}"
        )));
    }
    let depth_multiplier = oc / c;
    // The option is redundant (TFLite derives it from the shapes); where set, it must agree.
    if o.depth_multiplier != 0 && usize::try_from(o.depth_multiplier) != Ok(depth_multiplier) {
        return Err(ctx.shape_err(format!(
            "depth_multiplier is {} but {weights} and {input} make it {depth_multiplier}",
            o.depth_multiplier
        )));
    }
    check_bias(ctx, bias, oc)?;
    let out_h = spatial(ctx, "height", padding, h, kh, stride.h, dilation.h)?;
    let out_w = spatial(ctx, "width", padding, w, kw, stride.w, dilation.w)?;
    ctx.shape_is(output, &[n, out_h, out_w, oc])?;
    weights_types(ctx, input, weights, bias, output, 3, tflite_unset())?;
    Ok(OpKind::DepthwiseConv2d(DepthwiseConv2dOptions {
        padding,
        stride,
        dilation,
        depth_multiplier,
        activation,
    }))
}

fn tflite_unset() -> crate::tflite::TensorType {
    crate::tflite::TensorType::Float32
}

/// AVERAGE_POOL_2D, MAX_POOL_2D: input NHWC, output `[N, out_h, out_w, C]`, the same type
/// and quantization.
pub(super) fn pool2d(ctx: &Ctx<'_, '_>) -> Result<Pool2dOptions, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let o = options!(ctx, Pool2DOptions);
    let opts = Pool2dOptions {
        padding: padding(o.padding),
        stride: hw(ctx, ["stride_h", "stride_w"], o.stride_h, o.stride_w)?,
        filter: hw(
            ctx,
            ["filter_height", "filter_width"],
            o.filter_height,
            o.filter_width,
        )?,
        activation: ctx.activation(o.fused_activation_function)?,
    };
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.rank(input, 4)?;
    let [n, h, w, c] = dims4(input);
    let out_h = spatial(
        ctx,
        "height",
        opts.padding,
        h,
        opts.filter.h,
        opts.stride.h,
        1,
    )?;
    let out_w = spatial(
        ctx,
        "width",
        opts.padding,
        w,
        opts.filter.w,
        opts.stride.w,
        1,
    )?;
    ctx.shape_is(output, &[n, out_h, out_w, c])?;
    use ElementType::{Float32, Int16, Int8};
    let ty = ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
        if input.t.quantization != output.t.quantization {
            return Err(ctx.type_err(format!("{output} is quantized differently from {input}")));
        }
    }
    Ok(opts)
}
