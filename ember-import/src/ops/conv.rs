//! CONV_2D and DEPTHWISE_CONV_2D: NHWC convolutions with weights, per-channel
//! requantization and a fused activation; and a DEPTHWISE_CONV_2D with the 1×1 CONV_2D
//! after it lowered as one step, `separable_conv2d_s8`
//! ([`LowerOptions::fuse_separable`](crate::LowerOptions)).

use crate::check::{check_bias, dims4, hw, options, padding, spatial, weights_types, Ctx};
use crate::element::ElementType;
use crate::lowering::{
    int32_constant_values, kernel_activation, kernel_error, window, LowerError, Lowering,
};
use crate::op::{Activation, Conv2dOptions, DepthwiseConv2dOptions, Hw, Op, OpKind, Padding};
use crate::tensor::TensorId;
use crate::tflite;
use crate::ImportError;
use ember_kernels::conv2d::{Conv2dF32, Conv2dS8, Conv2dShape};
use ember_kernels::depthwise_conv2d::{
    DepthwiseConv2dF32, DepthwiseConv2dS8, DepthwiseConv2dShape,
};
use ember_kernels::separable_conv2d::{SeparableConv2dS8, MAX_MIDDLE_DEPTH};
use ember_kernels::KernelParams;

const WEIGHTED: &str = "inputs [input, weights, bias?] and one output";

/// CONV_2D: input NHWC, weights OHWI with I = the input's channels, bias [O], output
/// `[N, out_h, out_w, O]`.
pub(super) fn check_conv2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, WEIGHTED)?;
    let options = options!(ctx, Conv2DOptions);
    let conv = Conv2dOptions {
        padding: padding(options.padding),
        stride: hw(
            ctx,
            ["stride_h", "stride_w"],
            options.stride_h,
            options.stride_w,
        )?,
        dilation: hw(
            ctx,
            ["dilation_h_factor", "dilation_w_factor"],
            options.dilation_h_factor,
            options.dilation_w_factor,
        )?,
        activation: ctx.activation(options.fused_activation_function)?,
    };
    let (input, weights, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt_input(2),
        ctx.output(0)?,
    );
    for arg in [input, weights, output] {
        ctx.rank(arg, 4)?;
    }
    let [batches, height, width, channels] = dims4(input);
    let [out_channels, filter_height, filter_width, in_channels] = dims4(weights);
    if in_channels != channels {
        return Err(ctx.shape_err(format!(
            "{weights} (OHWI) has {in_channels} input channels but {input} has {channels}"
        )));
    }
    check_bias(ctx, bias, out_channels)?;
    let out_height = spatial(
        ctx,
        "height",
        conv.padding,
        height,
        filter_height,
        conv.stride.h,
        conv.dilation.h,
    )?;
    let out_width = spatial(
        ctx,
        "width",
        conv.padding,
        width,
        filter_width,
        conv.stride.w,
        conv.dilation.w,
    )?;
    ctx.shape_is(output, &[batches, out_height, out_width, out_channels])?;
    weights_types(
        ctx,
        input,
        weights,
        bias,
        output,
        0,
        options.quantized_bias_type,
    )?;
    Ok(OpKind::Conv2d(conv))
}

/// DEPTHWISE_CONV_2D: input NHWC, weights `[1, KH, KW, C × multiplier]`, bias
/// `[C × multiplier]`, output `[N, out_h, out_w, C × multiplier]`.
pub(super) fn check_depthwise_conv2d(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, WEIGHTED)?;
    let options = options!(ctx, DepthwiseConv2DOptions);
    let padding = padding(options.padding);
    let stride = hw(
        ctx,
        ["stride_h", "stride_w"],
        options.stride_h,
        options.stride_w,
    )?;
    let dilation = hw(
        ctx,
        ["dilation_h_factor", "dilation_w_factor"],
        options.dilation_h_factor,
        options.dilation_w_factor,
    )?;
    let activation = ctx.activation(options.fused_activation_function)?;
    let (input, weights, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt_input(2),
        ctx.output(0)?,
    );
    for arg in [input, weights, output] {
        ctx.rank(arg, 4)?;
    }
    let [batches, height, width, channels] = dims4(input);
    let [one, filter_height, filter_width, out_channels] = dims4(weights);
    if one != 1 {
        return Err(ctx.shape_err(format!("{weights} (1HWC) should have dimension 0 of 1")));
    }
    if out_channels % channels != 0 {
        return Err(ctx.shape_err(format!(
            "{weights} has {out_channels} channels, not a multiple of the {channels} of {input}"
        )));
    }
    let depth_multiplier = out_channels / channels;
    // The option is redundant (TFLite derives it from the shapes); where set, it must agree.
    if options.depth_multiplier != 0
        && usize::try_from(options.depth_multiplier) != Ok(depth_multiplier)
    {
        return Err(ctx.shape_err(format!(
            "depth_multiplier is {} but {weights} and {input} make it {depth_multiplier}",
            options.depth_multiplier
        )));
    }
    check_bias(ctx, bias, out_channels)?;
    let out_height = spatial(
        ctx,
        "height",
        padding,
        height,
        filter_height,
        stride.h,
        dilation.h,
    )?;
    let out_width = spatial(
        ctx,
        "width",
        padding,
        width,
        filter_width,
        stride.w,
        dilation.w,
    )?;
    ctx.shape_is(output, &[batches, out_height, out_width, out_channels])?;
    // FLOAT32 is the schema's "not set": DepthwiseConv2DOptions has no quantized_bias_type.
    weights_types(
        ctx,
        input,
        weights,
        bias,
        output,
        3,
        tflite::TensorType::Float32,
    )?;
    Ok(OpKind::DepthwiseConv2d(DepthwiseConv2dOptions {
        padding,
        stride,
        dilation,
        depth_multiplier,
        activation,
    }))
}

/// CONV_2D, int8 or float32.
pub(super) fn lower_conv2d(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Conv2d(conv) = &op.kind else {
        return Err(lowering.invalid(op, "not a CONV_2D".into()));
    };
    let window_options = WindowOptions {
        padding: conv.padding,
        stride: conv.stride,
        dilation: conv.dilation,
    };
    lower_convolution(lowering, op, window_options, None, conv.activation)
}

/// DEPTHWISE_CONV_2D, int8 or float32.
pub(super) fn lower_depthwise_conv2d(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::DepthwiseConv2d(depthwise) = &op.kind else {
        return Err(lowering.invalid(op, "not a DEPTHWISE_CONV_2D".into()));
    };
    let window_options = WindowOptions {
        padding: depthwise.padding,
        stride: depthwise.stride,
        dilation: depthwise.dilation,
    };
    lower_convolution(
        lowering,
        op,
        window_options,
        Some(depthwise.depth_multiplier),
        depthwise.activation,
    )
}

/// A convolution's padding, stride and dilation.
#[derive(Clone, Copy)]
struct WindowOptions {
    padding: Padding,
    stride: Hw,
    dilation: Hw,
}

/// `weights` (`outputs` rows of `per_output` elements of `element` bytes: OHWI)
/// transposed so that the `outputs` values of each `(h, w, i)` lie together: HWIO.
fn ohwi_to_hwio(weights: &[u8], outputs: usize, per_output: usize, element: usize) -> Vec<u8> {
    let mut out = vec![0u8; weights.len()];
    let row_bytes = (per_output * element).max(1);
    for (output, row) in weights.chunks_exact(row_bytes).enumerate() {
        for (tap, value) in row.chunks_exact(element).enumerate() {
            let at = (tap * outputs + output) * element;
            out[at..at + element].copy_from_slice(value);
        }
    }
    out
}

/// A CONV_2D (`depth_multiplier` `None`) or DEPTHWISE_CONV_2D.
fn lower_convolution(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    window_options: WindowOptions,
    depth_multiplier: Option<usize>,
    activation: Activation,
) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let weights = lowering.input(op, 1)?;
    let bias = op.inputs.get(2).copied().flatten();
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let input_shape = graph.tensor(input).shape.clone();
    let weights_shape = graph.tensor(weights).shape.clone();
    let output_shape = graph.tensor(output).shape.clone();
    if input_shape.len() != 4 || weights_shape.len() != 4 || output_shape.len() != 4 {
        return Err(lowering.invalid(op, "needs 4-D input, filter and output".into()));
    }
    let conv_window = window(
        window_options.padding,
        window_options.stride,
        window_options.dilation,
        &input_shape,
        (weights_shape[1], weights_shape[2]),
    );
    let out_depth = output_shape[3];
    let int8 = graph.tensor(input).element_type == ElementType::Int8;
    // Where the target's int8 convolution reads OHWI, a depthwise convolution over one
    // input channel runs as that convolution: its filter `[1, h, w, M]` transposed to
    // `[M, h, w, 1]` (made at import), the same products, per-channel requantization, bias
    // and clamp for each output channel.
    let depthwise_as_conv = (int8
        && lowering.options.int8_conv_ohwi
        && depth_multiplier.is_some()
        && input_shape[3] == 1
        && weights_shape[0] == 1
        && weights_shape[3] == out_depth)
        .then(|| {
            graph
                .tensor(weights)
                .data
                .filter(|bytes| bytes.len() == weights_shape.iter().product::<usize>())
                .map(|bytes| ohwi_to_hwio(bytes, weights_shape[1] * weights_shape[2], out_depth, 1))
        })
        .flatten();
    let (depth_multiplier, weights_shape) = match depthwise_as_conv {
        Some(_) => (None, vec![out_depth, weights_shape[1], weights_shape[2], 1]),
        None => (depth_multiplier, weights_shape),
    };
    // A convolution without groups reads its filter transposed to HWIO (made at import,
    // in place of TFLite's OHWI; a filter tensor another op also reads is kept in both),
    // unless the target's int8 kernel reads OHWI (`LowerOptions::int8_conv_ohwi`).
    let element = if int8 { 1 } else { 4 };
    let keep_ohwi = int8 && lowering.options.int8_conv_ohwi;
    let hwio = if depth_multiplier.is_none() && weights_shape[3] == input_shape[3] && !keep_ohwi {
        graph
            .tensor(weights)
            .data
            .filter(|bytes| bytes.len() == weights_shape.iter().product::<usize>() * element)
            .map(|bytes| {
                ohwi_to_hwio(
                    bytes,
                    weights_shape[0],
                    weights_shape[1] * weights_shape[2] * weights_shape[3],
                    element,
                )
            })
    } else {
        None
    };
    let input_operand = lowering.operand(input);
    let weights_operand = match (&hwio, &depthwise_as_conv) {
        (Some(filter), _) => {
            let name = format!("op{}.filter_hwio", op.index);
            lowering.constant(&name, filter)
        }
        (None, Some(filter)) => {
            let name = format!("op{}.filter_ohwi", op.index);
            lowering.constant(&name, filter)
        }
        (None, None) => lowering.operand(weights),
    };
    let output_operand = lowering.operand(output);
    let mut words = Vec::new();
    let kernel_name;
    // Binding 2, the bias, is settled below: folded with the input offset, the model's,
    // or (without a bias, never read) the filter standing in.
    let mut folded_operand = None;
    let mut bindings = vec![input_operand, weights_operand, weights_operand];
    let (offsets, range_s8, range_f32) = if int8 {
        let (_, input_zero_point) = lowering.per_tensor(op, input)?;
        let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
        let (multipliers, shifts) =
            lowering.requantization_constants(op, input, weights, output, out_depth)?;
        bindings.extend([multipliers, shifts]);
        (
            (-input_zero_point, output_zero_point),
            kernel_activation(activation)
                .range_s8(output_scale, output_zero_point)
                .map_err(kernel)?,
            (0.0, 0.0),
        )
    } else {
        ((0, 0), (0, 0), kernel_activation(activation).range_f32())
    };
    bindings.push(output_operand);
    match depth_multiplier {
        None => {
            let shape = Conv2dShape {
                batches: input_shape[0],
                input_height: input_shape[1],
                input_width: input_shape[2],
                input_depth: input_shape[3],
                filter_height: weights_shape[1],
                filter_width: weights_shape[2],
                filter_depth: weights_shape[3],
                output_height: output_shape[1],
                output_width: output_shape[2],
                output_depth: out_depth,
                window: conv_window,
                has_bias: bias.is_some(),
            };
            if int8 {
                let mut params = Conv2dS8 {
                    shape,
                    filter_hwio: hwio.is_some(),
                    input_offset: offsets.0,
                    output_offset: offsets.1,
                    act_min: range_s8.0,
                    act_max: range_s8.1,
                };
                // Where every tap of every output lies inside the input, the input offset
                // multiplies the same weights everywhere and folds into the bias.
                // (The folding sums the model's filter tensor as OHWI rows: not a
                // transposed depthwise filter's.)
                let folded = if shape.taps_inside_input() && depthwise_as_conv.is_none() {
                    lowering.folded_bias(weights, bias, out_depth, offsets.0, 0)
                } else {
                    None
                };
                if let Some(folded) = folded {
                    folded_operand =
                        Some(lowering.i32_constant(&format!("op{}.bias", op.index), &folded));
                    params.input_offset = 0;
                    params.shape.has_bias = true;
                }
                params.encode(&mut words);
                kernel_name = Conv2dS8::KERNEL;
            } else {
                let params = Conv2dF32 {
                    shape,
                    filter_hwio: hwio.is_some(),
                    act_min: range_f32.0,
                    act_max: range_f32.1,
                };
                params.encode(&mut words);
                kernel_name = Conv2dF32::KERNEL;
            }
        }
        Some(multiplier) => {
            let shape = DepthwiseConv2dShape {
                batches: input_shape[0],
                input_height: input_shape[1],
                input_width: input_shape[2],
                input_depth: input_shape[3],
                depth_multiplier: multiplier,
                filter_height: weights_shape[1],
                filter_width: weights_shape[2],
                output_height: output_shape[1],
                output_width: output_shape[2],
                window: conv_window,
                has_bias: bias.is_some(),
            };
            if int8 {
                let params = DepthwiseConv2dS8 {
                    shape,
                    input_offset: offsets.0,
                    output_offset: offsets.1,
                    act_min: range_s8.0,
                    act_max: range_s8.1,
                };
                params.encode(&mut words);
                kernel_name = DepthwiseConv2dS8::KERNEL;
            } else {
                let params = DepthwiseConv2dF32 {
                    shape,
                    act_min: range_f32.0,
                    act_max: range_f32.1,
                };
                params.encode(&mut words);
                kernel_name = DepthwiseConv2dF32::KERNEL;
            }
        }
    }
    bindings[2] = match (folded_operand, bias) {
        (Some(folded), _) => folded,
        (None, Some(bias)) => lowering.operand(bias),
        (None, None) => weights_operand,
    };
    lowering.dispatch(kernel_name, &words, &bindings);
    Ok(())
}

/// Lowers `depthwise` and `pointwise` (the op after it) as one separable convolution where
/// they form one: both int8 with per-tensor activations, the depthwise result read by the
/// pointwise convolution alone and not a model output, the pointwise convolution 1×1 with
/// stride 1 and no groups over constant weights, at most [`MAX_MIDDLE_DEPTH`] middle
/// channels. Returns whether it did; where not, nothing was added and each op lowers on
/// its own (reporting its own errors).
pub(super) fn lower_separable(
    lowering: &mut Lowering<'_, '_>,
    depthwise: &Op,
    pointwise: &Op,
) -> Result<bool, LowerError> {
    let Some(pair) = SeparablePair::of(lowering, depthwise, pointwise) else {
        return Ok(false);
    };
    let graph = lowering.graph;
    let kernel = kernel_error(depthwise);
    let (input, middle, output) = (pair.input, pair.middle, pair.output);
    let input_shape = &graph.tensor(input).shape;
    let middle_shape = &graph.tensor(middle).shape;
    let weights_shape = &graph.tensor(pair.depthwise_weights).shape;
    let middle_depth = middle_shape[3];
    let output_depth = graph.tensor(output).shape[3];
    let shape = DepthwiseConv2dShape {
        batches: input_shape[0],
        input_height: input_shape[1],
        input_width: input_shape[2],
        input_depth: input_shape[3],
        depth_multiplier: pair.multiplier,
        filter_height: weights_shape[1],
        filter_width: weights_shape[2],
        output_height: middle_shape[1],
        output_width: middle_shape[2],
        window: window(
            pair.padding,
            pair.stride,
            pair.dilation,
            input_shape,
            (weights_shape[1], weights_shape[2]),
        ),
        has_bias: pair.depthwise_bias.is_some(),
    };
    let (_, input_zero_point) = lowering.per_tensor(depthwise, input)?;
    let (middle_scale, middle_zero_point) = lowering.per_tensor(depthwise, middle)?;
    let (output_scale, output_zero_point) = lowering.per_tensor(pointwise, output)?;
    let first_range = kernel_activation(pair.depthwise_activation)
        .range_s8(middle_scale, middle_zero_point)
        .map_err(kernel)?;
    let second_range = kernel_activation(pair.pointwise_activation)
        .range_s8(output_scale, output_zero_point)
        .map_err(kernel_error(pointwise))?;
    // Each output stage packed as biases, multipliers, shifts.
    let (multipliers, shifts) = lowering.channel_requantization(
        depthwise,
        input,
        pair.depthwise_weights,
        middle,
        middle_depth,
    )?;
    let mut first = match pair.depthwise_bias {
        Some(bias) => bias,
        None => vec![0; middle_depth],
    };
    first.extend(multipliers);
    first.extend(shifts);
    // The middle zero point folds into the pointwise bias, as a lone 1×1 convolution's does.
    let (multipliers, shifts) = lowering.channel_requantization(
        pointwise,
        middle,
        pair.pointwise_weights,
        output,
        output_depth,
    )?;
    let bias = pair.pointwise_bias.unwrap_or_else(|| vec![0; output_depth]);
    let mut second = lowering
        .folded_bias(
            pair.pointwise_weights,
            pointwise.inputs.get(2).copied().flatten(),
            output_depth,
            -middle_zero_point,
            0,
        )
        .unwrap_or(bias);
    second.extend(multipliers);
    second.extend(shifts);
    let params = SeparableConv2dS8 {
        depthwise: DepthwiseConv2dS8 {
            shape,
            input_offset: -input_zero_point,
            output_offset: middle_zero_point,
            act_min: first_range.0,
            act_max: first_range.1,
        },
        output_depth,
        input_offset: 0,
        output_offset: output_zero_point,
        act_min: second_range.0,
        act_max: second_range.1,
    };
    let mut words = Vec::new();
    params.encode(&mut words);
    let name = format!("op{}", depthwise.index);
    let bindings = [
        lowering.operand(input),
        lowering.operand(pair.depthwise_weights),
        lowering.operand(pair.pointwise_weights),
        lowering.i32_constant(&format!("{name}.depthwise_stage"), &first),
        lowering.i32_constant(&format!("{name}.pointwise_stage"), &second),
        lowering.operand(output),
    ];
    lowering.dispatch(SeparableConv2dS8::KERNEL, &words, &bindings);
    Ok(true)
}

/// What a fusable pair reads, found by [`SeparablePair::of`].
struct SeparablePair {
    input: TensorId,
    middle: TensorId,
    output: TensorId,
    depthwise_weights: TensorId,
    pointwise_weights: TensorId,
    depthwise_bias: Option<Vec<i32>>,
    pointwise_bias: Option<Vec<i32>>,
    multiplier: usize,
    padding: Padding,
    stride: Hw,
    dilation: Hw,
    depthwise_activation: Activation,
    pointwise_activation: Activation,
}

impl SeparablePair {
    /// The pair's tensors and options, where the two form a separable convolution.
    fn of(lowering: &Lowering<'_, '_>, depthwise: &Op, pointwise: &Op) -> Option<Self> {
        let graph = lowering.graph;
        let (OpKind::DepthwiseConv2d(depthwise_options), OpKind::Conv2d(conv_options)) =
            (&depthwise.kind, &pointwise.kind)
        else {
            return None;
        };
        let input = (*depthwise.inputs.first()?)?;
        let depthwise_weights = (*depthwise.inputs.get(1)?)?;
        let middle = *depthwise.outputs.first()?;
        let pointwise_weights = (*pointwise.inputs.get(1)?)?;
        let output = *pointwise.outputs.first()?;
        let int8 = |tensor| graph.tensor(tensor).element_type == ElementType::Int8;
        if !(int8(input) && int8(middle) && int8(output) && int8(pointwise_weights)) {
            return None;
        }
        // The middle tensor is the pointwise convolution's input and nothing else's.
        let readers = graph
            .ops()
            .iter()
            .flat_map(|op| op.input_ids())
            .filter(|&tensor| tensor == middle)
            .count();
        if *pointwise.inputs.first()? != Some(middle)
            || readers != 1
            || graph.outputs().contains(&middle)
        {
            return None;
        }
        let (input_shape, middle_shape, output_shape) = (
            &graph.tensor(input).shape,
            &graph.tensor(middle).shape,
            &graph.tensor(output).shape,
        );
        let (depthwise_shape, pointwise_shape) = (
            &graph.tensor(depthwise_weights).shape,
            &graph.tensor(pointwise_weights).shape,
        );
        if input_shape.len() != 4
            || middle_shape.len() != 4
            || output_shape.len() != 4
            || depthwise_shape.len() != 4
        {
            return None;
        }
        let middle_depth = middle_shape[3];
        let output_depth = output_shape[3];
        let one_by_one = pointwise_shape.as_slice() == [output_depth, 1, 1, middle_depth]
            && conv_options.stride.h == 1
            && conv_options.stride.w == 1;
        if !one_by_one
            || output_shape[..3] != middle_shape[..3]
            || middle_depth > MAX_MIDDLE_DEPTH
            || depthwise_shape[0] != 1
            || depthwise_shape[3] != middle_depth
            || input_shape[3] * depthwise_options.depth_multiplier != middle_depth
            || graph.tensor(pointwise_weights).data?.len() != output_depth * middle_depth
        {
            return None;
        }
        // A bias: absent, or a constant int32 tensor of `channels` (else no fusion).
        let bias = |op: &Op, channels: usize| -> Option<Option<Vec<i32>>> {
            match op.inputs.get(2).copied().flatten() {
                None => Some(None),
                Some(bias) => int32_constant_values(graph, bias, channels).map(Some),
            }
        };
        Some(Self {
            input,
            middle,
            output,
            depthwise_weights,
            pointwise_weights,
            depthwise_bias: bias(depthwise, middle_depth)?,
            pointwise_bias: bias(pointwise, output_depth)?,
            multiplier: depthwise_options.depth_multiplier,
            padding: depthwise_options.padding,
            stride: depthwise_options.stride,
            dilation: depthwise_options.dilation,
            depthwise_activation: depthwise_options.activation,
            pointwise_activation: conv_options.activation,
        })
    }
}
