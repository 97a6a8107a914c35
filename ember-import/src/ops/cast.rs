//! CAST: each value converted to another element type (`static_cast`, the raw values:
//! quantization plays no part), the same shape.

use crate::check::Ctx;
use crate::element::ElementType::{self, Float32, Int16, Int32, Int8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::ImportError;
use ember_kernels::cast::{Cast, CastType};

/// The kernel's type for an element type CAST takes.
fn cast_type(ty: ElementType) -> Option<CastType> {
    Some(match ty {
        Int8 => CastType::Int8,
        Int16 => CastType::Int16,
        Int32 => CastType::Int32,
        Float32 => CastType::Float32,
        _ => return None,
    })
}

/// CAST: one input and one output of its shape, each int8, int16, int32 or float32.
pub(super) fn check_cast(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=1, 1, 1, "one input and one output")?;
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.shape_is(output, input.shape())?;
    for arg in [input, output] {
        if cast_type(arg.ty()).is_none() {
            return Err(ctx.type_err(format!(
                "{arg}: supported types are int8, int16, int32, float32"
            )));
        }
    }
    Ok(OpKind::Cast)
}

/// CAST, between any two of int8, int16, int32 and float32.
pub(super) fn lower_cast(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let output = op.outputs[0];
    let types = (
        cast_type(lowering.element_type(input)),
        cast_type(lowering.element_type(output)),
    );
    let (Some(from), Some(to)) = types else {
        return Err(lowering.invalid(op, "CAST between types it does not take".into()));
    };
    let len = lowering.graph.tensor(output).num_elements();
    let params = Cast::new(len, from, to).map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}
