//! The comparisons (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL), the
//! logical ops (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT) and SELECT_V2: the ops that make and
//! take bool tensors.

use super::elementwise::broadcast;
use crate::check::Ctx;
use crate::element::ElementType::{self, Bool, Float32, Int16, Int32, Int64, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::quantization::Quantization;
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::broadcast::BroadcastShape;
use ember_kernels::comparison::{ComparedValues, Comparison, ComparisonScaling, Predicate};
use ember_kernels::logical::{Logical, LogicalOp};
use ember_kernels::select::{Select, SelectShape};
use ember_kernels::KernelParams;

/// A comparison: two inputs of one type that broadcast to the bool output's shape. TFLM
/// compares float32, int32, int64 and int8 (EQUAL and NOT_EQUAL bool too); an int8 input's
/// scale must lie below 1 (TFLM's Prepare requires it).
fn check_comparison(ctx: &Ctx<'_, '_>, predicate: Predicate) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    let (left, right, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    check_broadcast(ctx, &[left.shape(), right.shape()], output)?;
    let equality = matches!(predicate, Predicate::Equal | Predicate::NotEqual);
    let ty = if equality {
        ctx.same_type(
            &[left, right],
            &[Float32, Int8, Int32, Int64, Bool],
            "float32, int8, int32, int64, bool",
        )?
    } else {
        ctx.same_type(
            &[left, right],
            &[Float32, Int8, Int32, Int64],
            "float32, int8, int32, int64",
        )?
    };
    if output.ty() != Bool {
        return Err(ctx.type_err(format!("{output} must be bool")));
    }
    if ty == Int8 {
        for arg in [left, right] {
            ctx.per_tensor(arg)?;
            if let Some(Quantization::PerTensor { scale, .. }) = &arg.tensor.quantization {
                if !(*scale > 0.0 && *scale < 1.0) {
                    return Err(ctx.type_err(format!(
                        "{arg}: an int8 comparison's scales must lie in (0, 1), as TFLM requires"
                    )));
                }
            }
        }
    }
    Ok(OpKind::Comparison(predicate))
}

/// EQUAL.
pub(super) fn check_equal(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::Equal)
}

/// NOT_EQUAL.
pub(super) fn check_not_equal(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::NotEqual)
}

/// LESS.
pub(super) fn check_less(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::Less)
}

/// LESS_EQUAL.
pub(super) fn check_less_equal(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::LessEqual)
}

/// GREATER.
pub(super) fn check_greater(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::Greater)
}

/// GREATER_EQUAL.
pub(super) fn check_greater_equal(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_comparison(ctx, Predicate::GreaterEqual)
}

/// Requires `output`'s shape to be the broadcast of `shapes`.
fn check_broadcast(
    ctx: &Ctx<'_, '_>,
    shapes: &[&[usize]],
    output: crate::check::Arg<'_, '_>,
) -> Result<(), ImportError> {
    let mut shape: Vec<usize> = Vec::new();
    for input in shapes {
        let Some(joined) = broadcast(&shape, input) else {
            let shown: Vec<String> = shapes.iter().map(|s| ShapeDisplay(s).to_string()).collect();
            return Err(ctx.shape_err(format!(
                "the inputs' shapes {} do not broadcast",
                shown.join(", ")
            )));
        };
        shape = joined;
    }
    ctx.shape_is(output, &shape)
}

/// A comparison of int8 (rescaled), int32 or float32 inputs.
pub(super) fn lower_comparison(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Comparison(predicate) = op.kind else {
        return Err(lowering.invalid(op, "not a comparison".into()));
    };
    let (left, right) = (lowering.input(op, 0)?, lowering.input(op, 1)?);
    let kernel = kernel_error(op);
    let graph = lowering.graph;
    let shape = BroadcastShape::new(&graph.tensor(left).shape, &graph.tensor(right).shape)
        .map_err(kernel)?;
    let values = match lowering.element_type(left) {
        Int8 => {
            let scaling = |(scale, zero_point): (f32, i32)| {
                ComparisonScaling::new(f64::from(scale), zero_point).map_err(kernel)
            };
            ComparedValues::Int8(
                scaling(lowering.per_tensor(op, left)?)?,
                scaling(lowering.per_tensor(op, right)?)?,
            )
        }
        Int32 => ComparedValues::Int32,
        Float32 => ComparedValues::Float32,
        other => return Err(lowering.unsupported(op, format!("{} from {other:?}", op.kind.name()))),
    };
    let params = Comparison {
        shape,
        predicate,
        values,
    };
    lowering.dispatch_params(&params, &[left, right, op.outputs[0]]);
    Ok(())
}

/// LOGICAL_AND and LOGICAL_OR: two bool inputs that broadcast to the bool output's shape.
fn check_logical_pair(ctx: &Ctx<'_, '_>, kind: OpKind) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [a, b] and one output")?;
    let (left, right, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    check_broadcast(ctx, &[left.shape(), right.shape()], output)?;
    ctx.same_type(&[left, right, output], &[Bool], "bool")?;
    Ok(kind)
}

/// LOGICAL_AND.
pub(super) fn check_logical_and(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_logical_pair(ctx, OpKind::LogicalAnd)
}

/// LOGICAL_OR.
pub(super) fn check_logical_or(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    check_logical_pair(ctx, OpKind::LogicalOr)
}

/// LOGICAL_NOT: one bool input and a bool output of its shape.
pub(super) fn check_logical_not(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    ctx.same_type(&[input, output], &[Bool], "bool")?;
    Ok(OpKind::LogicalNot)
}

/// LOGICAL_AND, LOGICAL_OR, and LOGICAL_NOT as the exclusive or of its input with a
/// one-element `true` constant.
pub(super) fn lower_logical(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let kernel = kernel_error(op);
    let input_shape = lowering.graph.tensor(input).shape.clone();
    let (logical_op, second) = match op.kind {
        OpKind::LogicalAnd => (LogicalOp::And, Some(lowering.input(op, 1)?)),
        OpKind::LogicalOr => (LogicalOp::Or, Some(lowering.input(op, 1)?)),
        OpKind::LogicalNot => (LogicalOp::Xor, None),
        _ => return Err(lowering.invalid(op, "not a logical op".into())),
    };
    let mut words = Vec::new();
    let bindings = match second {
        Some(right) => {
            let shape = BroadcastShape::new(&input_shape, &lowering.graph.tensor(right).shape)
                .map_err(kernel)?;
            Logical {
                shape,
                op: logical_op,
            }
            .encode(&mut words);
            [
                lowering.operand(input),
                lowering.operand(right),
                lowering.operand(output),
            ]
        }
        None => {
            let shape = BroadcastShape::new(&input_shape, &[1]).map_err(kernel)?;
            Logical {
                shape,
                op: logical_op,
            }
            .encode(&mut words);
            [
                lowering.operand(input),
                lowering.constant(&format!("op {} true", op.index), &[1]),
                lowering.operand(output),
            ]
        }
    };
    lowering.dispatch(Logical::KERNEL, &words, &bindings);
    Ok(())
}

/// SELECT_V2: a bool condition and x and y of one type (float32, int8, int16), the three
/// broadcasting to the output's shape, of x's type.
pub(super) fn check_select_v2(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(3..=3, 3, 1, "inputs [condition, x, y] and one output")?;
    let (condition, x, y, output) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.output(0)?);
    if condition.ty() != Bool {
        return Err(ctx.type_err(format!("{condition} must be bool")));
    }
    ctx.same_type(
        &[x, y, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    check_broadcast(ctx, &[condition.shape(), x.shape(), y.shape()], output)?;
    Ok(OpKind::SelectV2)
}

/// SELECT_V2: the chosen values moved as they are.
pub(super) fn lower_select_v2(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let condition = lowering.input(op, 0)?;
    let (x, y) = (lowering.input(op, 1)?, lowering.input(op, 2)?);
    let output = op.outputs[0];
    let graph = lowering.graph;
    let shape = SelectShape::new(
        &graph.tensor(condition).shape,
        &graph.tensor(x).shape,
        &graph.tensor(y).shape,
        &graph.tensor(output).shape,
    )
    .map_err(kernel_error(op))?;
    let element_bytes = ElementType::size(lowering.element_type(x));
    let params = Select {
        shape,
        element_bytes,
    }
    .validate()
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[condition, x, y, output]);
    Ok(())
}
