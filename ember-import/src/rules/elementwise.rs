//! ADD, MUL, SOFTMAX, LOGISTIC, TANH, QUANTIZE and DEQUANTIZE: one output value per
//! (broadcast) input value.

use super::{options, Ctx};
use crate::tensor::ShapeDisplay;
use crate::{ElementType, ImportError, OpKind};
use ElementType::{Float16, Float32, Int16, Int32, Int8, Uint8};

/// Numpy broadcasting: shapes aligned at the end, each pair of dimensions equal or one of
/// them 1.
pub(crate) fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        // Dimension i of the result, counted from the front, in a shape of lower rank.
        let pad = rank - s.len();
        if i < pad {
            1
        } else {
            s[i - pad]
        }
    };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// ADD and MUL: two inputs of one type (float32, int8, int16, int32) that broadcast to the
/// output's shape.
pub(super) fn add_mul(ctx: &Ctx<'_, '_>, add: bool) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    let activation = if add {
        // `pot_scale_int16` picks between two int16 kernels of the same result contract; it
        // does not change what the op computes.
        ctx.activation(options!(ctx, AddOptions).fused_activation_function)?
    } else {
        ctx.activation(options!(ctx, MulOptions).fused_activation_function)?
    };
    let (a, b, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let Some(shape) = broadcast(a.shape(), b.shape()) else {
        return Err(ctx.shape_err(format!("{a} and {b} do not broadcast")));
    };
    if output.shape() != shape.as_slice() {
        return Err(ctx.shape_err(format!(
            "{output} should have the broadcast shape {}",
            ShapeDisplay(&shape)
        )));
    }
    let ty = ctx.same_type(
        &[a, b, output],
        &[Float32, Int8, Int16, Int32],
        "float32, int8, int16, int32",
    )?;
    if ty != Float32 {
        for t in [a, b, output] {
            ctx.per_tensor(t)?;
        }
    }
    Ok(if add {
        OpKind::Add { activation }
    } else {
        OpKind::Mul { activation }
    })
}

/// SOFTMAX over the last dimension: float32 to float32, int8 to int8 or int16, int16 to
/// int16; the same shape.
pub(super) fn softmax(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let beta = options!(ctx, SoftmaxOptions).beta;
    if !beta.is_finite() {
        return Err(ctx.bad_options(format!("beta is {beta}")));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    if input.t.rank() == 0 {
        return Err(ctx.shape_err(format!("{input} must have at least one dimension")));
    }
    ctx.shape_is(output, input.shape())?;
    match (input.ty(), output.ty()) {
        (Float32, Float32) => {}
        (Int8, Int8 | Int16) | (Int16, Int16) => {
            ctx.per_tensor(input)?;
            ctx.per_tensor(output)?;
        }
        _ => {
            return Err(ctx.type_err(format!(
                "{input} to {output}: supported are float32 to float32, int8 to int8 or int16, \
                 int16 to int16"
            )))
        }
    }
    Ok(OpKind::Softmax { beta })
}

/// LOGISTIC and TANH: the same shape and type (float32, int8, int16).
pub(super) fn unary(ctx: &Ctx<'_, '_>) -> Result<(), ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    let ty = ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(())
}

/// QUANTIZE: float32 (or a quantized integer, requantized) to int8, uint8 or int16 quantized
/// per tensor; the same shape.
pub(super) fn quantize(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(crate::tflite::BuiltinOptionsRef::QuantizeOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not QuantizeOptions"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    if !matches!(input.ty(), Float32 | Int8 | Uint8 | Int16)
        || !matches!(output.ty(), Int8 | Uint8 | Int16)
    {
        return Err(ctx.type_err(format!(
            "{input} to {output}: supported are float32, int8, uint8 or int16 to int8, uint8 or \
             int16"
        )));
    }
    ctx.per_tensor(input)?;
    ctx.per_tensor(output)?;
    Ok(OpKind::Quantize)
}

/// DEQUANTIZE: int8, uint8, int16 (quantized per tensor or per channel) or float16 to float32;
/// the same shape.
pub(super) fn dequantize(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(crate::tflite::BuiltinOptionsRef::DequantizeOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not DequantizeOptions"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    if !matches!(input.ty(), Int8 | Uint8 | Int16 | Float16) || output.ty() != Float32 {
        return Err(ctx.type_err(format!(
            "{input} to {output}: supported are int8, uint8, int16 or float16 to float32"
        )));
    }
    if input.ty().is_quantized_integer() && input.t.quantization.is_none() {
        return Err(ctx.type_err(format!("{input} has no quantization")));
    }
    Ok(OpKind::Dequantize)
}

#[cfg(test)]
mod tests {
    use super::broadcast;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[1, 4, 4, 3], &[3]), Some(vec![1, 4, 4, 3]));
        assert_eq!(broadcast(&[2, 1], &[1, 5]), Some(vec![2, 5]));
        assert_eq!(broadcast(&[], &[2, 2]), Some(vec![2, 2]));
        assert_eq!(broadcast(&[2, 3], &[3, 2]), None);
    }
}
