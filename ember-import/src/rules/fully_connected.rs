//! FULLY_CONNECTED: `output = input · weightsᵀ + bias`.

use super::{check_bias, options, weights_types, Ctx};
use crate::tensor::ShapeDisplay;
use crate::tflite;
use crate::{FullyConnectedOptions, ImportError, OpKind};

/// Weights `[out, in]`; the input is `batch × in` elements (its last dimension `in` with
/// `keep_num_dims`); bias `[out]`; output `[batch, out]`, or the input's leading dimensions
/// and `out` with `keep_num_dims`.
pub(super) fn fully_connected(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=3, 2, 1, "inputs [input, weights, bias?] and one output")?;
    let o = options!(ctx, FullyConnectedOptions);
    let activation = ctx.activation(o.fused_activation_function)?;
    if o.weights_format != tflite::FullyConnectedOptionsWeightsFormat::Default {
        return Err(ctx.unsupported(
            "weights_format",
            format!("{:?}", o.weights_format),
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
    let elements = input.t.num_elements();
    if elements % depth != 0 || input.t.rank() == 0 {
        return Err(ctx.shape_err(format!(
            "{input} is not a whole number of rows of {depth}, the depth of {weights}"
        )));
    }
    let batch = elements / depth;
    let expected: Vec<usize> = if o.keep_num_dims {
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
    weights_types(ctx, input, weights, bias, output, 0, o.quantized_bias_type)?;
    Ok(OpKind::FullyConnected(FullyConnectedOptions {
        activation,
        keep_num_dims: o.keep_num_dims,
    }))
}
