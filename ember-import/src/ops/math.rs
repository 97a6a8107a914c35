//! The element-wise one-input ops without options ([`ElementwiseOp`]): the math functions
//! (ABS, NEG, SQUARE, SQRT, RSQRT, EXP, LOG, FLOOR, CEIL, ROUND, SIN, COS) and the
//! activations RELU, RELU6, HARD_SWISH and ELU. Each float op is a kernel of its own
//! (`ember_kernels::math_f32`, `ember_kernels::activation_f32`); an int8 RELU or RELU6 is
//! `requantize_s8` with TFLM's clamp, an int8 HARD_SWISH `hard_swish_s8`, an int8 ELU, ABS
//! or RSQRT `lut_s8` with TFLM's table (from `ember_kernels::lut_s8_tables`).

use crate::check::Ctx;
use crate::element::ElementType::{self, Float32, Int16, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{ElementwiseOp, Op, OpKind};
use crate::tensor::TensorId;
use crate::ImportError;
use ember_kernels::hard_swish::HardSwishS8;
use ember_kernels::lut_s8::{LutS8, TABLE_LEN};
use ember_kernels::lut_s8_tables::{abs_table, elu_table, rsqrt_table};
use ember_kernels::quantize::RequantizeS8;
use ember_kernels::unary_f32::{UnaryF32, UnaryFunctionF32};
use ember_kernels::KernelParams;
use ember_kernels::{activation_f32, math_f32};

/// The element types TFLM takes for `op`, and how errors list them.
fn types(op: ElementwiseOp) -> (&'static [ElementType], &'static str) {
    use ElementwiseOp::*;
    match op {
        Abs | Rsqrt | Relu | Relu6 => (&[Float32, Int8, Int16], "float32, int8, int16"),
        HardSwish | Elu => (&[Float32, Int8], "float32, int8"),
        Neg | Square | Sqrt | Exp | Log | Floor | Ceil | Round | Sin | Cos => {
            (&[Float32], "float32")
        }
    }
}

/// One input and one output of its shape and type (quantized per tensor where integer).
fn check_elementwise(ctx: &Ctx<'_, '_>, op: ElementwiseOp) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    let (allowed, allowed_text) = types(op);
    if ctx.same_type(&[input, output], allowed, allowed_text)? != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok(OpKind::Elementwise(op))
}

/// A rule per op, for the registry.
macro_rules! rules {
    ($($rule:ident => $op:ident),+ $(,)?) => {
        $(
            #[doc = concat!("`", stringify!($op), "`'s rule: one input and one output of its shape and type.")]
            pub(super) fn $rule(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
                check_elementwise(ctx, ElementwiseOp::$op)
            }
        )+
    };
}

rules!(
    check_abs => Abs,
    check_neg => Neg,
    check_square => Square,
    check_sqrt => Sqrt,
    check_rsqrt => Rsqrt,
    check_exp => Exp,
    check_log => Log,
    check_floor => Floor,
    check_ceil => Ceil,
    check_round => Round,
    check_sin => Sin,
    check_cos => Cos,
    check_relu => Relu,
    check_relu6 => Relu6,
    check_hard_swish => HardSwish,
    check_elu => Elu,
);

/// Any [`ElementwiseOp`]: float32 through its own kernel, int8 RELU and RELU6 through
/// `requantize_s8`, int8 HARD_SWISH through `hard_swish_s8`, int8 ELU, ABS and RSQRT
/// through `lut_s8` and TFLM's table (the registry lets no other int8 op through).
pub(super) fn lower_elementwise(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::Elementwise(function) = op.kind else {
        return Err(lowering.invalid(op, "not an element-wise op".into()));
    };
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let len = lowering.graph.tensor(output).num_elements();
    let tensors = [input, output];
    if lowering.element_type(input) == Int8 {
        return lower_int8(lowering, op, function, len, &tensors);
    }
    /// Dispatches `F`'s kernel over `len` elements.
    fn float<F: UnaryFunctionF32>(
        lowering: &mut Lowering<'_, '_>,
        op: &Op,
        len: usize,
        tensors: &[TensorId; 2],
    ) -> Result<(), LowerError> {
        let params = UnaryF32::<F>::prepare(len).map_err(kernel_error(op))?;
        lowering.dispatch_params(&params, tensors);
        Ok(())
    }
    let dispatch = match function {
        ElementwiseOp::Abs => float::<math_f32::Abs>,
        ElementwiseOp::Neg => float::<math_f32::Neg>,
        ElementwiseOp::Square => float::<math_f32::Square>,
        ElementwiseOp::Sqrt => float::<math_f32::Sqrt>,
        ElementwiseOp::Rsqrt => float::<math_f32::Rsqrt>,
        ElementwiseOp::Exp => float::<math_f32::Exp>,
        ElementwiseOp::Log => float::<math_f32::Log>,
        ElementwiseOp::Floor => float::<math_f32::Floor>,
        ElementwiseOp::Ceil => float::<math_f32::Ceil>,
        ElementwiseOp::Round => float::<math_f32::Round>,
        ElementwiseOp::Sin => float::<math_f32::Sin>,
        ElementwiseOp::Cos => float::<math_f32::Cos>,
        ElementwiseOp::Relu => float::<activation_f32::Relu>,
        ElementwiseOp::Relu6 => float::<activation_f32::Relu6>,
        ElementwiseOp::HardSwish => float::<activation_f32::HardSwish>,
        ElementwiseOp::Elu => float::<activation_f32::Elu>,
    };
    dispatch(lowering, op, len, &tensors)
}

/// An int8 RELU or RELU6 (`requantize_s8`), HARD_SWISH (`hard_swish_s8`), or ELU, ABS or
/// RSQRT (`lut_s8` with TFLM's table).
///
/// RSQRT differs from TFLM on inputs below the input zero point: TFLM fails the Invoke,
/// the table gives what TFLM's arithmetic gives them (see `ember_kernels::lut_s8_tables`).
fn lower_int8(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    function: ElementwiseOp,
    len: usize,
    &[input, output]: &[TensorId; 2],
) -> Result<(), LowerError> {
    let kernel = kernel_error(op);
    let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
    let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
    let input_quantization = (input_scale, input_zero_point);
    let output_quantization = (output_scale, output_zero_point);
    let tensors = [input, output];
    match function {
        ElementwiseOp::Relu => {
            let params = RequantizeS8::relu(
                len,
                input_scale,
                input_zero_point,
                output_scale,
                output_zero_point,
            )
            .map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        ElementwiseOp::Relu6 => {
            let params = RequantizeS8::relu6(len, input_scale, input_zero_point).map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        ElementwiseOp::HardSwish => {
            let params = HardSwishS8::prepare(len, input_quantization, output_quantization)
                .map_err(kernel)?;
            lowering.dispatch_params(&params, &tensors);
        }
        ElementwiseOp::Elu => {
            let table = elu_table(input_quantization, output_quantization, f32::exp);
            dispatch_table(lowering, op, function, len, &tensors, &table)?;
        }
        ElementwiseOp::Abs => {
            let table = abs_table(input_quantization, output_quantization);
            dispatch_table(lowering, op, function, len, &tensors, &table)?;
        }
        ElementwiseOp::Rsqrt => {
            let table = rsqrt_table(input_quantization, output_quantization);
            dispatch_table(lowering, op, function, len, &tensors, &table)?;
        }
        other => return Err(lowering.unsupported(op, format!("{} from Int8", other.name()))),
    }
    Ok(())
}

/// `lut_s8` over `len` elements of `input` into `output`, looking up `table` (a constant
/// named after `op` and its `function`).
fn dispatch_table(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    function: ElementwiseOp,
    len: usize,
    &[input, output]: &[TensorId; 2],
    table: &[u8; TABLE_LEN],
) -> Result<(), LowerError> {
    let mut words = Vec::new();
    LutS8::new(len)
        .map_err(kernel_error(op))?
        .encode(&mut words);
    let name = format!("op {} {} table", op.index, function.name());
    let bindings = [
        lowering.operand(input),
        lowering.constant(&name, table),
        lowering.operand(output),
    ];
    lowering.dispatch(LutS8::KERNEL, &words, &bindings);
    Ok(())
}
