//! GELU (TFLM has no such op; TensorFlow Lite's reference kernels are its oracle): float32
//! through `gelu_f32` (erfc) or `gelu_tanh_f32` (the `approximate` option), int8 through
//! `lut_s8` with TFLite's table (`ember_kernels::gelu::gelu_table`), computed here with the
//! float formula TFLite's Prepare evaluates.

use crate::check::{options, Ctx};
use crate::element::ElementType::{Float32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::ImportError;
use ember_kernels::gelu::{gelu_table, gelu_tanh_with, Gelu, GeluF32, GeluTanhF32};
use ember_kernels::lut_s8::LutS8;
use ember_kernels::unary_f32::UnaryFunctionF32;
use ember_kernels::KernelParams;

/// GELU's rule: one input and one output of its shape and type (float32, int8, quantized
/// per tensor), `approximate` from its options.
pub(super) fn check_gelu(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let approximate = options!(ctx, GeluOptions).approximate;
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    if ctx.same_type(&[input, output], &[Float32, Int8], "float32, int8")? != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(OpKind::Gelu { approximate })
}

/// GELU: float32 through `gelu_f32` or `gelu_tanh_f32`; int8 through `lut_s8` and TFLite's
/// table, the exact form with `libm`'s `erfcf`, the approximate one with the C library's
/// `tanhf` (as TFLite's `std::tanh`).
pub(super) fn lower_gelu(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Gelu { approximate } = op.kind else {
        return Err(lowering.invalid(op, "not a GELU".into()));
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let len = lowering.graph.tensor(output).num_elements();
    let kernel = kernel_error(op);
    if lowering.element_type(input) == Float32 {
        if approximate {
            let params = GeluTanhF32::prepare(len).map_err(kernel)?;
            lowering.dispatch_params(&params, &[input, output]);
        } else {
            let params = GeluF32::prepare(len).map_err(kernel)?;
            lowering.dispatch_params(&params, &[input, output]);
        }
        return Ok(());
    }
    let input_q = lowering.per_tensor(op, input)?;
    let output_q = lowering.per_tensor(op, output)?;
    let table = if approximate {
        gelu_table(input_q, output_q, |x| gelu_tanh_with(x, f32::tanh))
    } else {
        gelu_table(input_q, output_q, Gelu::apply)
    };
    let mut words = Vec::new();
    LutS8::new(len).map_err(kernel)?.encode(&mut words);
    let name = format!("op {} GELU table", op.index);
    let bindings = [
        lowering.operand(input),
        lowering.constant(&name, &table),
        lowering.operand(output),
    ];
    lowering.dispatch(LutS8::KERNEL, &words, &bindings);
    Ok(())
}
