//! QUANTIZE and DEQUANTIZE: values converted between real and quantized, the same shape.

use crate::check::Ctx;
use crate::element::ElementType::{self, Float16, Float32, Int16, Int32, Int8, Uint8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::tflite::BuiltinOptionsRef;
use crate::ImportError;
use ember_kernels::cast::CastType;
use ember_kernels::dequantize::{DequantizeS16F32, DequantizeS8F32, DequantizeU8F32};
use ember_kernels::quantize::{
    QuantizeF32S16, QuantizeF32S8, RequantizeS8, RequantizeS8U8, RequantizeU8S8,
};
use ember_kernels::requantize_int::RequantizeInt;

/// The (input, output) type pairs TFLM's QUANTIZE runs (`EvalQuantizeReference`; its
/// Prepare admits more, which Eval then refuses).
pub(super) const QUANTIZE_PAIRS: &[(ElementType, ElementType)] = &[
    (Float32, Int8),
    (Int8, Int8),
    (Uint8, Int8),
    (Int8, Uint8),
    (Float32, Int16),
    (Int8, Int16),
    (Int8, Int32),
    (Int16, Int8),
    (Int16, Int16),
    (Int16, Int32),
    (Int32, Int8),
    (Int32, Int16),
];

/// `requantize_int`'s word for a signed quantized integer type.
fn quantized_int(ty: ElementType) -> Option<CastType> {
    match ty {
        Int8 => Some(CastType::Int8),
        Int16 => Some(CastType::Int16),
        Int32 => Some(CastType::Int32),
        _ => None,
    }
}

/// QUANTIZE: float32 (or a quantized integer, requantized) to int8, uint8, int16 or int32
/// quantized per tensor, the pairs TFLM runs ([`QUANTIZE_PAIRS`]); the same shape.
pub(super) fn check_quantize(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(BuiltinOptionsRef::QuantizeOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not QuantizeOptions"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    if !QUANTIZE_PAIRS.contains(&(input.ty(), output.ty())) {
        return Err(ctx.type_err(format!(
            "{input} to {output}: supported are float32 to int8 or int16, int8 to int8, uint8, \
             int16 or int32, uint8 to int8, int16 to int8, int16 or int32, int32 to int8 or \
             int16"
        )));
    }
    ctx.per_tensor(input)?;
    ctx.per_tensor(output)?;
    Ok(OpKind::Quantize)
}

/// DEQUANTIZE: int8, uint8, int16 (quantized per tensor or per channel) or float16 to float32;
/// the same shape.
pub(super) fn check_dequantize(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(BuiltinOptionsRef::DequantizeOptions(_))
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
    if input.ty().is_quantized_integer() && input.tensor.quantization.is_none() {
        return Err(ctx.type_err(format!("{input} has no quantization")));
    }
    Ok(OpKind::Dequantize)
}

/// QUANTIZE: float32 to int8 or int16, or a quantized integer requantized (8-bit pairs by
/// their own kernels, pairs with an int16 or int32 side by `requantize_int`).
pub(super) fn lower_quantize(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let len = lowering.graph.tensor(output).num_elements();
    let tensors = [input, output];
    let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
    let input_type = lowering.element_type(input);
    let output_type = lowering.element_type(output);
    if input_type == Float32 {
        if output_type == Int16 {
            let params =
                QuantizeF32S16::prepare(len, output_scale, output_zero_point).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        } else {
            let params =
                QuantizeF32S8::prepare(len, output_scale, output_zero_point).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        return Ok(());
    }
    let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
    if input_type != Int8 || output_type != Int8 {
        if let (Some(from), Some(to)) = (quantized_int(input_type), quantized_int(output_type)) {
            let params = RequantizeInt::prepare(
                len,
                (from, to),
                (input_scale, input_zero_point),
                (output_scale, output_zero_point),
            );
            lowering.dispatch_params(&params.map_err(kernel)?, &tensors);
            return Ok(());
        }
    }
    let parts = (
        len,
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
    );
    match (input_type, output_type) {
        (Uint8, _) => {
            let params = RequantizeU8S8::prepare(parts.0, parts.1, parts.2, parts.3, parts.4);
            lowering.dispatch_params(&params.map_err(kernel)?, &tensors);
        }
        (_, Uint8) => {
            let params = RequantizeS8U8::prepare(parts.0, parts.1, parts.2, parts.3, parts.4);
            lowering.dispatch_params(&params.map_err(kernel)?, &tensors);
        }
        _ => {
            let params = RequantizeS8::prepare(parts.0, parts.1, parts.2, parts.3, parts.4);
            lowering.dispatch_params(&params.map_err(kernel)?, &tensors);
        }
    }
    Ok(())
}

/// DEQUANTIZE: int8, uint8 or int16 to float32.
pub(super) fn lower_dequantize(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let len = lowering.graph.tensor(output).num_elements();
    let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
    let kernel = kernel_error(op);
    if lowering.element_type(input) == Int16 {
        let params =
            DequantizeS16F32::prepare(len, input_scale, input_zero_point).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else if lowering.element_type(input) == Uint8 {
        let params =
            DequantizeU8F32::prepare(len, input_scale, input_zero_point).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        let params =
            DequantizeS8F32::prepare(len, input_scale, input_zero_point).map_err(kernel)?;
        lowering.dispatch_params(&params, &[input, output]);
    }
    Ok(())
}
