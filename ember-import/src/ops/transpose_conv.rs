//! TRANSPOSE_CONV: an NHWC transpose convolution (the gradient of CONV_2D with respect to
//! its input) with OHWI weights, per-channel requantization and a fused activation, as
//! TFLM's `transpose_conv.cc` runs it: its output size is the output tensor's, its padding
//! `ComputePaddingHeightWidth` over that size (TFLM reads no `output_shape` values).

use crate::check::{check_bias, dims4, hw, options, padding, weights_types, Ctx};
use crate::element::ElementType;
use crate::lowering::{kernel_activation, kernel_error, window, LowerError, Lowering};
use crate::op::{Hw, Op, OpKind};
use crate::ImportError;
use ember_kernels::transpose_conv::{TransposeConvF32, TransposeConvS8, TransposeConvShape};
use ember_kernels::KernelParams;

/// TRANSPOSE_CONV: inputs `[output_shape, weights, input, bias?]`: `output_shape` an int32
/// `[4]` (where constant, the output's shape), weights OHWI with I = the input's channels,
/// bias `[O]`; the output `[N, H, W, O]`, N the input's batches (H and W any: TFLM sizes
/// the op by its output tensor). Types as CONV_2D's; no dilation (TFLM has none).
pub(super) fn check_transpose_conv(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        3..=4,
        3,
        1,
        "inputs [output_shape, weights, input, bias?] and one output",
    )?;
    let options = options!(ctx, TransposeConvOptions);
    let padding = padding(options.padding);
    let stride = hw(
        ctx,
        ["stride_h", "stride_w"],
        options.stride_h,
        options.stride_w,
    )?;
    let activation = ctx.activation(options.fused_activation_function)?;
    let (output_shape, weights, input, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.input(2)?,
        ctx.opt_input(3),
        ctx.output(0)?,
    );
    for arg in [input, weights, output] {
        ctx.rank(arg, 4)?;
    }
    if output_shape.ty() != ElementType::Int32 {
        return Err(ctx.type_err(format!("{output_shape} must be int32")));
    }
    if output_shape.shape() != [4] {
        return Err(ctx.shape_err(format!("{output_shape} must have shape [4]")));
    }
    if output_shape.tensor.data.is_some() {
        let values = ctx.const_ints(output_shape)?;
        let dims: Vec<i64> = output.shape().iter().map(|&d| d as i64).collect();
        if values != dims {
            return Err(ctx.shape_err(format!(
                "{output_shape} holds {values:?}, not the shape of {output}"
            )));
        }
    }
    let [batches, _, _, channels] = dims4(input);
    let [out_channels, _, _, in_channels] = dims4(weights);
    if in_channels != channels {
        return Err(ctx.shape_err(format!(
            "{weights} (OHWI) has {in_channels} input channels but {input} has {channels}"
        )));
    }
    check_bias(ctx, bias, out_channels)?;
    let [out_batches, _, _, out_depth] = dims4(output);
    if out_batches != batches || out_depth != out_channels {
        return Err(ctx.shape_err(format!(
            "{output} should have the {batches} batches of {input} and the {out_channels} \
             output channels of {weights}"
        )));
    }
    weights_types(
        ctx,
        input,
        weights,
        bias,
        output,
        0,
        options.quantized_bias_type,
    )?;
    Ok(OpKind::TransposeConv {
        padding,
        stride,
        activation,
    })
}

/// TRANSPOSE_CONV, int8 (`transpose_conv_s8`: per-channel multipliers and shifts as
/// constants) or float32 (`transpose_conv_f32`), over the model's OHWI filter.
pub(super) fn lower_transpose_conv(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::TransposeConv {
        padding,
        stride,
        activation,
    } = op.kind
    else {
        return Err(lowering.invalid(op, "not a TRANSPOSE_CONV".into()));
    };
    let weights = lowering.input(op, 1)?;
    let input = lowering.input(op, 2)?;
    let bias = op.inputs.get(3).copied().flatten();
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let input_shape = graph.tensor(input).shape.clone();
    let weights_shape = graph.tensor(weights).shape.clone();
    let output_shape = graph.tensor(output).shape.clone();
    if input_shape.len() != 4 || weights_shape.len() != 4 || output_shape.len() != 4 {
        return Err(lowering.invalid(op, "needs 4-D input, filter and output".into()));
    }
    // TFLM's padding: a convolution's over the output (dilation 1), as if the output were
    // that convolution's input.
    let no_dilation = Hw { h: 1, w: 1 };
    let filter = (weights_shape[1], weights_shape[2]);
    let pads = window(padding, stride, no_dilation, &output_shape, filter);
    let shape = TransposeConvShape {
        batches: input_shape[0],
        input_height: input_shape[1],
        input_width: input_shape[2],
        input_depth: input_shape[3],
        filter_height: weights_shape[1],
        filter_width: weights_shape[2],
        output_height: output_shape[1],
        output_width: output_shape[2],
        output_depth: output_shape[3],
        stride_height: stride.h,
        stride_width: stride.w,
        pad_height: pads.pad_height,
        pad_width: pads.pad_width,
        has_bias: bias.is_some(),
    }
    .validate()
    .map_err(kernel)?;
    let input_operand = lowering.operand(input);
    let weights_operand = lowering.operand(weights);
    // Without a bias, binding 2 is never read: the filter stands in.
    let bias_operand = match bias {
        Some(bias) => lowering.operand(bias),
        None => weights_operand,
    };
    let mut words = Vec::new();
    let mut bindings = vec![input_operand, weights_operand, bias_operand];
    let kernel_name = if lowering.element_type(input) == ElementType::Int8 {
        let (_, input_zero_point) = lowering.per_tensor(op, input)?;
        let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
        let (multipliers, shifts) =
            lowering.requantization_constants(op, input, weights, output, shape.output_depth)?;
        bindings.extend([multipliers, shifts]);
        let (act_min, act_max) = kernel_activation(activation)
            .range_s8(output_scale, output_zero_point)
            .map_err(kernel)?;
        TransposeConvS8 {
            shape,
            input_offset: -input_zero_point,
            output_offset: output_zero_point,
            act_min,
            act_max,
        }
        .encode(&mut words);
        TransposeConvS8::KERNEL
    } else {
        let (act_min, act_max) = kernel_activation(activation).range_f32();
        TransposeConvF32 {
            shape,
            act_min,
            act_max,
        }
        .encode(&mut words);
        TransposeConvF32::KERNEL
    };
    bindings.push(lowering.operand(output));
    lowering.dispatch(kernel_name, &words, &bindings);
    Ok(())
}
