//! Each op's lowering: its kernel, its parameters and its bindings, following the
//! contracts `ember-kernels` declares.

use crate::element::ElementType;
use crate::lower::{per_tensor, site, LowerError, Lowering};
use crate::op::{Op, OpKind};
use ember_kernels::dequantize::DequantizeS8F32;
use ember_kernels::logistic::{LogisticF32, LogisticS8};
use ember_kernels::quantize::{QuantizeF32S8, RequantizeS8};
use ember_kernels::softmax::{SoftmaxF32, SoftmaxS8, SoftmaxS8S16};
use ember_kernels::tanh::{TanhF32, TanhS8};
use ember_kernels::{KernelError, KernelParams};

/// The ops Ember lowers, for error messages.
pub(crate) const SUPPORTED: &str = "RESHAPE, SOFTMAX (int8→int8, int8→int16, float32), \
     LOGISTIC and TANH (int8, float32), QUANTIZE (float32→int8, int8→int8), DEQUANTIZE \
     (int8→float32)";

use ElementType::{Float32 as F32, Int16 as I16, Int8 as I8};

/// Lowers `op` (anything but a view).
pub(crate) fn lower_op(l: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = l.input(op, 0)?;
    let output = op.outputs[0];
    let (it, ot) = (
        l.graph.tensor(input).element_type,
        l.graph.tensor(output).element_type,
    );
    let len = l.graph.tensor(output).num_elements();
    let kernel = |e: KernelError| l.invalid(op, e.to_string());
    match (&op.kind, it, ot) {
        (OpKind::Softmax { beta }, I8, I8 | I16) => {
            let (outer, depth) = rows(l, output);
            let (si, _) = per_tensor(l, op, input)?;
            let (so, zo) = per_tensor(l, op, output)?;
            if ot == I8 {
                let p = SoftmaxS8::prepare(outer, depth, *beta, si, so, zo).map_err(kernel)?;
                unary(l, &p, input, output)
            } else {
                let p = SoftmaxS8S16::prepare(outer, depth, *beta, si, so, zo).map_err(kernel)?;
                unary(l, &p, input, output)
            }
        }
        (OpKind::Softmax { beta }, F32, F32) => {
            let (outer, depth) = rows(l, output);
            let p = SoftmaxF32::prepare(outer, depth, *beta).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Logistic, I8, I8) => {
            let (si, zi) = per_tensor(l, op, input)?;
            let (_, zo) = per_tensor(l, op, output)?;
            let p = LogisticS8::prepare(len, si, zi, zo).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Logistic, F32, F32) => {
            let p = LogisticF32::prepare(len).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Tanh, I8, I8) => {
            let (si, zi) = per_tensor(l, op, input)?;
            let p = TanhS8::prepare(len, si, zi).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Tanh, F32, F32) => {
            let p = TanhF32::prepare(len).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Quantize, F32, I8) => {
            let (so, zo) = per_tensor(l, op, output)?;
            let p = QuantizeF32S8::prepare(len, so, zo).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Quantize, I8, I8) => {
            let (si, zi) = per_tensor(l, op, input)?;
            let (so, zo) = per_tensor(l, op, output)?;
            let p = RequantizeS8::prepare(len, si, zi, so, zo).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Dequantize, I8, F32) => {
            let (si, zi) = per_tensor(l, op, input)?;
            let p = DequantizeS8F32::prepare(len, si, zi).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (kind, it, ot) => Err(LowerError::Unsupported {
            site: site(op),
            what: format!("{} from {it:?} to {ot:?}", kind.name()),
            supported: SUPPORTED,
        }),
    }
}

/// The rows of a tensor for an op over its last dimension: (product of the others, last).
fn rows(l: &Lowering<'_, '_>, tensor: crate::tensor::TensorId) -> (usize, usize) {
    let shape = &l.graph.tensor(tensor).shape;
    let depth = shape.last().copied().unwrap_or(1);
    (shape.iter().rev().skip(1).product(), depth)
}

/// A dispatch of `params`' kernel over `[input, output]`.
fn unary<P: KernelParams>(
    l: &mut Lowering<'_, '_>,
    params: &P,
    input: crate::tensor::TensorId,
    output: crate::tensor::TensorId,
) -> Result<(), LowerError> {
    let mut words = Vec::new();
    params.encode(&mut words);
    let bindings = [l.operand(input), l.operand(output)];
    l.dispatch(P::KERNEL, &words, &bindings);
    Ok(())
}
