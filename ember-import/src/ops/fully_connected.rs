//! FULLY_CONNECTED: `output = input · weightsᵀ + bias`.

use crate::check::{check_bias, options, weights_types, Ctx};
use crate::element::ElementType;
use crate::lowering::{kernel_activation, kernel_error, LowerError, Lowering};
use crate::op::{FullyConnectedOptions, Op, OpKind};
use crate::quantization::Quantization;
use crate::tensor::ShapeDisplay;
use crate::tflite;
use crate::ImportError;
use ember_kernels::fully_connected::{FullyConnectedF32, FullyConnectedS8, FullyConnectedShape};
use ember_kernels::KernelParams;

/// Weights `[out, in]`; the input is `batch × in` elements (its last dimension `in` with
/// `keep_num_dims`); bias `[out]`; output `[batch, out]`, or the input's leading dimensions
/// and `out` with `keep_num_dims`.
pub(super) fn check_fully_connected(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, "inputs [input, weights, bias?] and one output")?;
    let options = options!(ctx, FullyConnectedOptions);
    let activation = ctx.activation(options.fused_activation_function)?;
    if options.weights_format != tflite::FullyConnectedOptionsWeightsFormat::Default {
        return Err(ctx.unsupported(
            "weights_format",
            format!("{:?}", options.weights_format),
            "DEFAULT",
        ));
    }
    // `asymmetric_quantize_inputs` only concerns hybrid ops (float input, integer weights),
    // which the type rules refuse.
    let (input, weights, bias, output) = (
        ctx.input(0)?,
        ctx.input(1)?,
        ctx.opt_input(2),
        ctx.output(0)?,
    );
    ctx.rank(weights, 2)?;
    let (out, depth) = (weights.shape()[0], weights.shape()[1]);
    let elements = input.tensor.num_elements();
    if elements % depth != 0 || input.tensor.rank() == 0 {
        return Err(ctx.shape_err(format!(
            "{input} is not a whole number of rows of {depth}, the depth of {weights}"
        )));
    }
    let batch = elements / depth;
    let expected: Vec<usize> = if options.keep_num_dims {
        let (last, lead) = input.shape().split_last().unwrap_or((&0, &[]));
        if *last != depth {
            return Err(ctx.shape_err(format!(
                "with keep_num_dims, {input} should end in {depth}, the depth of {weights}"
            )));
        }
        lead.iter().copied().chain([out]).collect()
    } else {
        vec![batch, out]
    };
    if output.shape() != expected.as_slice() {
        return Err(ctx.shape_err(format!(
            "{output} should have shape {} ({input}, {weights})",
            ShapeDisplay(&expected)
        )));
    }
    check_bias(ctx, bias, out)?;
    weights_types(
        ctx,
        input,
        weights,
        bias,
        output,
        0,
        options.quantized_bias_type,
    )?;
    Ok(OpKind::FullyConnected(FullyConnectedOptions {
        activation,
        keep_num_dims: options.keep_num_dims,
    }))
}

/// FULLY_CONNECTED, int8 (the input offset folded into the bias where the weights and bias
/// are constants) or float32.
pub(super) fn lower_fully_connected(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::FullyConnected(fully_connected) = &op.kind else {
        return Err(lowering.invalid(op, "not a FULLY_CONNECTED".into()));
    };
    let activation = fully_connected.activation;
    let input = lowering.input(op, 0)?;
    let weights = lowering.input(op, 1)?;
    let bias = op.inputs.get(2).copied().flatten();
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let weights_tensor = lowering.graph.tensor(weights);
    let (output_depth, accum_depth) = (
        weights_tensor.shape[0],
        weights_tensor.shape.get(1).copied().unwrap_or(1),
    );
    let batches = lowering.graph.tensor(input).num_elements() / accum_depth.max(1);
    let shape = FullyConnectedShape {
        batches,
        accum_depth,
        output_depth,
        has_bias: bias.is_some(),
    };
    let (input_operand, weights_operand, output_operand) = (
        lowering.operand(input),
        lowering.operand(weights),
        lowering.operand(output),
    );
    // Without a bias, binding 2 is never read: the weights stand in. A bias folded with
    // the input offset replaces the model's (made only where it is not).
    let unfolded_bias = |lowering: &mut Lowering<'_, '_>| match bias {
        Some(bias) => lowering.operand(bias),
        None => weights_operand,
    };
    match lowering.element_type(input) {
        ElementType::Int8 => {
            let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
            let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
            let quantization = lowering.graph.tensor(weights).quantization.clone();
            let per_channel = matches!(
                &quantization,
                Some(Quantization::PerChannel { scales, .. }) if scales.len() > 1
            );
            let weights_zero_point = quantization
                .as_ref()
                .and_then(|q| q.zero_points().first().copied())
                .unwrap_or(0) as i32;
            let (act_min, act_max) = kernel_activation(activation)
                .range_s8(output_scale, output_zero_point)
                .map_err(kernel)?;
            let mut params = FullyConnectedS8 {
                shape,
                input_offset: -input_zero_point,
                filter_offset: -weights_zero_point,
                output_offset: output_zero_point,
                act_min,
                act_max,
                per_channel,
            };
            let folded = lowering.folded_bias(
                weights,
                bias,
                output_depth,
                -input_zero_point,
                -weights_zero_point,
            );
            let bias_operand = match folded {
                Some(folded) => {
                    params.input_offset = 0;
                    params.shape.has_bias = true;
                    lowering.i32_constant(&format!("op{}.bias", op.index), &folded)
                }
                None => unfolded_bias(lowering),
            };
            let (multipliers, shifts) = if per_channel {
                lowering.requantization_constants(op, input, weights, output, output_depth)?
            } else {
                let weights_scale = quantization
                    .as_ref()
                    .and_then(|q| q.scales().first().copied())
                    .unwrap_or(1.0);
                let (multiplier, shift) = FullyConnectedS8::per_tensor_multiplier(
                    input_scale,
                    weights_scale,
                    output_scale,
                );
                let name = format!("op{}", op.index);
                (
                    lowering.i32_constant(&format!("{name}.multiplier"), &[multiplier]),
                    lowering.i32_constant(&format!("{name}.shift"), &[shift]),
                )
            };
            let mut words = Vec::new();
            params.encode(&mut words);
            lowering.dispatch(
                FullyConnectedS8::KERNEL,
                &words,
                &[
                    input_operand,
                    weights_operand,
                    bias_operand,
                    multipliers,
                    shifts,
                    output_operand,
                ],
            );
        }
        _ => {
            let (act_min, act_max) = kernel_activation(activation).range_f32();
            let params = FullyConnectedF32 {
                shape,
                act_min,
                act_max,
            };
            let mut words = Vec::new();
            params.encode(&mut words);
            let bias_operand = unfolded_bias(lowering);
            lowering.dispatch(
                FullyConnectedF32::KERNEL,
                &words,
                &[input_operand, weights_operand, bias_operand, output_operand],
            );
        }
    }
    Ok(())
}
