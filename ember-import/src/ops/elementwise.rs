//! ADD, MUL and the other broadcasting two-input ops ([`BinaryOp`]: SUB, DIV,
//! SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU): one output value per pair of (broadcast)
//! input values.

use crate::check::{options, Ctx};
use crate::element::ElementType::{self, Float32, Int16, Int32, Int64, Int8};
use crate::lowering::{kernel_activation, kernel_error, LowerError, Lowering};
use crate::op::{Activation, BinaryOp, Op, OpKind};
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::add::{AddF32, AddS8};
use ember_kernels::arithmetic_f32::{DivF32, SquaredDifferenceF32, SubF32};
use ember_kernels::broadcast::BroadcastShape;
use ember_kernels::div_s8::DivS8;
use ember_kernels::floor_div_mod::{FloorDivF32, FloorModF32};
use ember_kernels::maximum_minimum::{MaximumF32, MaximumS8, MinimumF32, MinimumS8};
use ember_kernels::mul::{MulF32, MulS8};
use ember_kernels::prelu::{PreluF32, PreluS8};
use ember_kernels::squared_difference_s8::SquaredDifferenceS8;
use ember_kernels::sub::SubS8;

/// Numpy broadcasting: shapes aligned at the end, each pair of dimensions equal or one of
/// them 1.
pub(crate) fn broadcast(left: &[usize], right: &[usize]) -> Option<Vec<usize>> {
    let rank = left.len().max(right.len());
    let dim = |shape: &[usize], index: usize| {
        // Dimension `index` of the result, counted from the front, in a shape of lower rank.
        let pad = rank - shape.len();
        if index < pad {
            1
        } else {
            shape[index - pad]
        }
    };
    (0..rank)
        .map(|index| match (dim(left, index), dim(right, index)) {
            (left_dim, right_dim) if left_dim == right_dim => Some(left_dim),
            (1, right_dim) => Some(right_dim),
            (left_dim, 1) => Some(left_dim),
            _ => None,
        })
        .collect()
}

/// ADD: two inputs of one type (float32, int8, int16, int32) that broadcast to the output's
/// shape.
pub(super) fn check_add(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    // `pot_scale_int16` picks between two int16 kernels of the same result contract; it does
    // not change what the op computes.
    let activation = ctx.activation(options!(ctx, AddOptions).fused_activation_function)?;
    check_broadcast_types(ctx, ARITHMETIC_TYPES)?;
    Ok(OpKind::Add { activation })
}

/// MUL: two inputs of one type (float32, int8, int16, int32) that broadcast to the output's
/// shape.
pub(super) fn check_mul(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    let activation = ctx.activation(options!(ctx, MulOptions).fused_activation_function)?;
    check_broadcast_types(ctx, ARITHMETIC_TYPES)?;
    Ok(OpKind::Mul { activation })
}

/// The types TFLM's ADD, MUL, SUB and SQUARED_DIFFERENCE take.
const ARITHMETIC_TYPES: (&[ElementType], &str) = (
    &[Float32, Int8, Int16, Int32],
    "float32, int8, int16, int32",
);

/// SUB: two inputs of one type (float32, int8, int16, int32) that broadcast to the output's
/// shape, and a fused activation.
pub(super) fn check_sub(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    // `pot_scale_int16` picks between two int16 kernels of one result contract, as ADD's.
    let activation = ctx.activation(options!(ctx, SubOptions).fused_activation_function)?;
    check_broadcast_types(ctx, ARITHMETIC_TYPES)?;
    Ok(OpKind::Binary {
        op: BinaryOp::Sub,
        activation,
    })
}

/// DIV: two inputs of one type (float32, int8, int32) that broadcast to the output's shape,
/// and a fused activation.
pub(super) fn check_div(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    let activation = ctx.activation(options!(ctx, DivOptions).fused_activation_function)?;
    check_broadcast_types(ctx, (&[Float32, Int8, Int32], "float32, int8, int32"))?;
    Ok(OpKind::Binary {
        op: BinaryOp::Div,
        activation,
    })
}

/// SQUARED_DIFFERENCE: two inputs of one type (float32, int8, int16, int32) that broadcast
/// to the output's shape.
pub(super) fn check_squared_difference(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unfused(ctx, BinaryOp::SquaredDifference, ARITHMETIC_TYPES)
}

/// MAXIMUM: two inputs of one type (float32, int8, int16, int32, int64) that broadcast to
/// the output's shape.
pub(super) fn check_maximum(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unfused(ctx, BinaryOp::Maximum, SELECT_TYPES)
}

/// MINIMUM: as MAXIMUM.
pub(super) fn check_minimum(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unfused(ctx, BinaryOp::Minimum, SELECT_TYPES)
}

/// FLOOR_DIV: two float32 inputs (the one type TFLM's micro kernel takes) that broadcast to
/// the output's shape, over at most 4 dimensions where their shapes differ (TFLM's
/// `BroadcastBinaryFunction4DSlow`).
pub(super) fn check_floor_div(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_floor(ctx, BinaryOp::FloorDiv)
}

/// FLOOR_MOD: as FLOOR_DIV.
pub(super) fn check_floor_mod(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_floor(ctx, BinaryOp::FloorMod)
}

/// FLOOR_DIV's and FLOOR_MOD's rule.
fn check_floor(ctx: &Ctx<'_, '_>, op: BinaryOp) -> Result<OpKind, ImportError> {
    let kind = check_unfused(ctx, op, (&[Float32], "float32"))?;
    let (left, right, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    if left.shape() != right.shape() && output.shape().len() > 4 {
        return Err(ctx.shape_err(format!(
            "{left} and {right} broadcast over {} dimensions; TFLM's {} broadcasts over 4 at most",
            output.shape().len(),
            op.name()
        )));
    }
    Ok(kind)
}

/// PRELU: input and alpha of one type (float32, int8, int16) that broadcast to the output's
/// shape.
pub(super) fn check_prelu(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_unfused(
        ctx,
        BinaryOp::Prelu,
        (&[Float32, Int8, Int16], "float32, int8, int16"),
    )
}

/// The types TFLM's MAXIMUM and MINIMUM take.
const SELECT_TYPES: (&[ElementType], &str) = (
    &[Float32, Int8, Int16, Int32, Int64],
    "float32, int8, int16, int32, int64",
);

/// A broadcasting op without a fused activation.
fn check_unfused(
    ctx: &Ctx<'_, '_>,
    op: BinaryOp,
    types: (&[ElementType], &'static str),
) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    check_broadcast_types(ctx, types)?;
    Ok(OpKind::Binary {
        op,
        activation: Activation::None,
    })
}

/// The shapes and types of a broadcasting two-input op: both inputs and the output of one
/// of `types` (quantized per tensor where integer), the output of the broadcast shape.
fn check_broadcast_types(
    ctx: &Ctx<'_, '_>,
    (types, types_text): (&[ElementType], &'static str),
) -> Result<ElementType, ImportError> {
    let (left, right, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let Some(shape) = broadcast(left.shape(), right.shape()) else {
        return Err(ctx.shape_err(format!("{left} and {right} do not broadcast")));
    };
    if output.shape() != shape.as_slice() {
        return Err(ctx.shape_err(format!(
            "{output} should have the broadcast shape {}",
            ShapeDisplay(&shape)
        )));
    }
    let ty = ctx.same_type(&[left, right, output], types, types_text)?;
    if ty != Float32 {
        for arg in [left, right, output] {
            ctx.per_tensor(arg)?;
        }
    }
    Ok(ty)
}

/// ADD, int8 or float32.
pub(super) fn lower_add(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Add { activation } = op.kind else {
        return Err(lowering.invalid(op, "not an ADD".into()));
    };
    lower_arithmetic(lowering, op, activation, Arithmetic::Add)
}

/// MUL, int8 or float32.
pub(super) fn lower_mul(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Mul { activation } = op.kind else {
        return Err(lowering.invalid(op, "not a MUL".into()));
    };
    lower_arithmetic(lowering, op, activation, Arithmetic::Mul)
}

/// A [`BinaryOp`]: float32 each through its own kernel, int8 SUB rescaled as ADD, DIV by
/// fixed-point reciprocals, SQUARED_DIFFERENCE rescaled as ADD then squared, MAXIMUM and
/// MINIMUM on the raw values and PRELU with its multipliers (the registry lets no other int8
/// op through).
pub(super) fn lower_binary(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Binary {
        op: binary,
        activation,
    } = op.kind
    else {
        return Err(lowering.invalid(op, "not a broadcasting two-input op".into()));
    };
    let left = lowering.input(op, 0)?;
    let right = lowering.input(op, 1)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let shape = BroadcastShape::new(&graph.tensor(left).shape, &graph.tensor(right).shape)
        .map_err(kernel)?;
    let tensors = [left, right, output];
    if lowering.element_type(left) == Int8 {
        match binary {
            // On the raw values: no quantization needed.
            BinaryOp::Maximum => lowering.dispatch_params(&MaximumS8::new(shape), &tensors),
            BinaryOp::Minimum => lowering.dispatch_params(&MinimumS8::new(shape), &tensors),
            _ => {
                let (left_q, right_q, output_q) = (
                    lowering.per_tensor(op, left)?,
                    lowering.per_tensor(op, right)?,
                    lowering.per_tensor(op, output)?,
                );
                let activation = kernel_activation(activation);
                match binary {
                    BinaryOp::Prelu => {
                        let params =
                            PreluS8::prepare(shape, left_q, right_q, output_q).map_err(kernel)?;
                        lowering.dispatch_params(&params, &tensors);
                    }
                    BinaryOp::Sub => {
                        let params =
                            SubS8::from_quantization(shape, left_q, right_q, output_q, activation)
                                .map_err(kernel)?;
                        lowering.dispatch_params(&params, &tensors);
                    }
                    BinaryOp::Div => {
                        let params =
                            DivS8::from_quantization(shape, left_q, right_q, output_q, activation)
                                .map_err(kernel)?;
                        lowering.dispatch_params(&params, &tensors);
                    }
                    BinaryOp::SquaredDifference => {
                        let params = SquaredDifferenceS8::from_quantization(
                            shape, left_q, right_q, output_q,
                        )
                        .map_err(kernel)?;
                        lowering.dispatch_params(&params, &tensors);
                    }
                    other => {
                        return Err(lowering.unsupported(op, format!("{} from Int8", other.name())));
                    }
                }
            }
        }
        return Ok(());
    }
    // TFLM clamps SUB and DIV to the fused activation's range; the others it never clamps.
    let (act_min, act_max) = match binary {
        BinaryOp::Sub | BinaryOp::Div => kernel_activation(activation).range_f32(),
        _ => (f32::NEG_INFINITY, f32::INFINITY),
    };
    match binary {
        BinaryOp::Sub => lowering.dispatch_params(&SubF32::new(shape, act_min, act_max), &tensors),
        BinaryOp::Div => lowering.dispatch_params(&DivF32::new(shape, act_min, act_max), &tensors),
        BinaryOp::SquaredDifference => lowering.dispatch_params(
            &SquaredDifferenceF32::new(shape, act_min, act_max),
            &tensors,
        ),
        BinaryOp::Maximum => {
            lowering.dispatch_params(&MaximumF32::new(shape, act_min, act_max), &tensors)
        }
        BinaryOp::Minimum => {
            lowering.dispatch_params(&MinimumF32::new(shape, act_min, act_max), &tensors)
        }
        BinaryOp::Prelu => {
            lowering.dispatch_params(&PreluF32::new(shape, act_min, act_max), &tensors)
        }
        BinaryOp::FloorDiv => {
            lowering.dispatch_params(&FloorDivF32::new(shape, act_min, act_max), &tensors)
        }
        BinaryOp::FloorMod => {
            lowering.dispatch_params(&FloorModF32::new(shape, act_min, act_max), &tensors)
        }
    }
    Ok(())
}

/// Which of the two.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arithmetic {
    Add,
    Mul,
}

fn lower_arithmetic(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    activation: Activation,
    arithmetic: Arithmetic,
) -> Result<(), LowerError> {
    let left = lowering.input(op, 0)?;
    let right = lowering.input(op, 1)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let shape = BroadcastShape::new(&graph.tensor(left).shape, &graph.tensor(right).shape)
        .map_err(kernel)?;
    let tensors = [left, right, output];
    if lowering.element_type(left) == Int8 {
        let (left_q, right_q, output_q) = (
            lowering.per_tensor(op, left)?,
            lowering.per_tensor(op, right)?,
            lowering.per_tensor(op, output)?,
        );
        let activation = kernel_activation(activation);
        match arithmetic {
            Arithmetic::Add => {
                let params = AddS8::from_quantization(shape, left_q, right_q, output_q, activation)
                    .map_err(kernel)?;
                lowering.dispatch_params(&params, &tensors);
            }
            Arithmetic::Mul => {
                let params = MulS8::from_quantization(shape, left_q, right_q, output_q, activation)
                    .map_err(kernel)?;
                lowering.dispatch_params(&params, &tensors);
            }
        }
    } else {
        let (act_min, act_max) = kernel_activation(activation).range_f32();
        match arithmetic {
            // The built-in add_f32 or mul_f32 given AddF32's or MulF32's words, a workgroup
            // per 64 elements.
            Arithmetic::Add => lowering.dispatch_params_on(
                &AddF32::new(shape, act_min, act_max),
                &tensors,
                Lowering::groups_for(shape.len()),
            ),
            Arithmetic::Mul => lowering.dispatch_params_on(
                &MulF32::new(shape, act_min, act_max),
                &tensors,
                Lowering::groups_for(shape.len()),
            ),
        }
    }
    Ok(())
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
