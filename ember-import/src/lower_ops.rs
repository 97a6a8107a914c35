//! Each op's lowering: its kernel, its parameters and its bindings, following the
//! contracts `ember-kernels` declares.

use crate::element::ElementType;
use crate::lower::{per_tensor, site, LowerError, Lowering};
use crate::op::{Activation, Hw, Padding};
use crate::op::{Op, OpKind};
use crate::quantization::Quantization;
use crate::tensor::TensorId;
use ember_kernels::activation::Activation as Act;
use ember_kernels::add::{AddF32, AddS8};
use ember_kernels::broadcast::BroadcastShape;
use ember_kernels::concatenation::Concatenation;
use ember_kernels::conv2d::{per_channel_multipliers, Conv2dF32, Conv2dS8, Conv2dShape};
use ember_kernels::depthwise_conv2d::{
    DepthwiseConv2dF32, DepthwiseConv2dS8, DepthwiseConv2dShape,
};
use ember_kernels::dequantize::DequantizeS8F32;
use ember_kernels::fully_connected::{FullyConnectedF32, FullyConnectedS8, FullyConnectedShape};
use ember_kernels::logistic::{LogisticF32, LogisticS8};
use ember_kernels::mean::{MeanF32, MeanS8, MeanShape};
use ember_kernels::mul::{MulF32, MulS8};
use ember_kernels::pad::Pad;
use ember_kernels::padding::{compute_padding_height_width, Padding as Pad2d, Window};
use ember_kernels::pooling::{
    AveragePool2dF32, AveragePool2dS8, MaxPool2dF32, MaxPool2dS8, Pool2dShape,
};
use ember_kernels::quantize::{QuantizeF32S8, RequantizeS8};
use ember_kernels::softmax::{SoftmaxF32, SoftmaxS8, SoftmaxS8S16};
use ember_kernels::strided_slice::StridedSlice;
use ember_kernels::tanh::{TanhF32, TanhS8};
use ember_kernels::transpose::Transpose;
use ember_kernels::{KernelError, KernelParams};

/// The ops Ember lowers, for error messages.
pub(crate) const SUPPORTED: &str = "FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, \
     AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL, MEAN (int8 per-tensor or per-channel, float32), \
     PAD, TRANSPOSE, CONCATENATION, STRIDED_SLICE (int8, float32), RESHAPE, SOFTMAX \
     (int8→int8, int8→int16, float32), LOGISTIC and TANH (int8, float32), QUANTIZE \
     (float32→int8, int8→int8), DEQUANTIZE (int8→float32)";

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
    let kernel = kerr(op);
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
        (OpKind::FullyConnected(o), I8 | F32, _) => fully_connected(l, op, o.activation),
        (OpKind::Conv2d(o), I8 | F32, _) => {
            conv2d(l, op, o.padding, o.stride, o.dilation, None, o.activation)
        }
        (OpKind::DepthwiseConv2d(o), I8 | F32, _) => conv2d(
            l,
            op,
            o.padding,
            o.stride,
            o.dilation,
            Some(o.depth_multiplier),
            o.activation,
        ),
        (OpKind::AveragePool2d(o), I8 | F32, _) => pool(l, op, o, true),
        (OpKind::MaxPool2d(o), I8 | F32, _) => pool(l, op, o, false),
        (OpKind::Add { activation }, I8 | F32, _) => elementwise(l, op, *activation, true),
        (OpKind::Mul { activation }, I8 | F32, _) => elementwise(l, op, *activation, false),
        (OpKind::Mean { axes, .. }, I8 | F32, _) => {
            let dims = &l.graph.tensor(input).shape;
            let axes: Vec<i32> = axes.iter().map(|&a| a as i32).collect();
            let shape = MeanShape::new(dims, &axes).map_err(kernel)?;
            if it == I8 {
                let (si, zi) = per_tensor(l, op, input)?;
                let (so, zo) = per_tensor(l, op, output)?;
                let (multiplier, shift) = MeanS8::multiplier(si, so);
                let p = MeanS8 {
                    shape,
                    input_zero_point: zi,
                    output_zero_point: zo,
                    multiplier,
                    shift,
                };
                unary(l, &p, input, output)
            } else {
                unary(l, &MeanF32 { shape }, input, output)
            }
        }
        (OpKind::Pad { paddings }, I8 | F32, _) => {
            let value = if it == I8 {
                per_tensor(l, op, input)?.1 as u8 as u32
            } else {
                0
            };
            let pads: Vec<[i32; 2]> = paddings
                .iter()
                .map(|&(a, b)| [a as i32, b as i32])
                .collect();
            let p =
                Pad::new(it.size(), value, &l.graph.tensor(input).shape, &pads).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Transpose { perm }, I8 | F32, _) => {
            let perm: Vec<i32> = perm.iter().map(|&a| a as i32).collect();
            let p =
                Transpose::new(it.size(), &l.graph.tensor(input).shape, &perm).map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::StridedSlice(o), I8 | F32, _) => {
            // The importer's bounds are resolved indices; an end of -1 (a negative stride
            // down to index 0 inclusive) is no index the kernel's resolution reads as
            // such (it counts negatives from the end), so those axes go by `end_mask`,
            // which stops a negative stride past index 0.
            let down_to_zero = o
                .end
                .iter()
                .enumerate()
                .fold(0u32, |m, (i, &e)| m | (u32::from(e < 0) << i));
            let narrow = |v: &[i64]| v.iter().map(|&x| x as i32).collect::<Vec<i32>>();
            let shrink = o
                .shrink
                .iter()
                .enumerate()
                .fold(0u32, |m, (i, &s)| m | (u32::from(s) << i));
            let p = StridedSlice::resolve(
                it.size(),
                &l.graph.tensor(input).shape,
                &narrow(&o.begin),
                &narrow(&o.end),
                &narrow(&o.strides),
                0,
                down_to_zero,
                shrink,
            )
            .map_err(kernel)?;
            unary(l, &p, input, output)
        }
        (OpKind::Concatenation { axis, activation }, I8 | F32, _) => {
            if *activation != Activation::None {
                return Err(LowerError::Unsupported {
                    site: site(op),
                    what: "CONCATENATION with a fused activation".into(),
                    supported: SUPPORTED,
                });
            }
            let inputs: Vec<TensorId> = op.inputs.iter().flatten().copied().collect();
            let sizes: Vec<usize> = inputs
                .iter()
                .map(|t| l.graph.tensor(*t).shape[*axis])
                .collect();
            let p = Concatenation::new(
                it.size(),
                &l.graph.tensor(output).shape,
                &sizes,
                *axis as i32,
            )
            .map_err(kernel)?;
            let mut words = Vec::new();
            p.encode(&mut words);
            let mut bindings: Vec<_> = inputs.iter().map(|t| l.operand(*t)).collect();
            bindings.push(l.operand(output));
            l.dispatch(Concatenation::KERNEL, &words, &bindings);
            Ok(())
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

/// The kernels' activation for the importer's.
pub(crate) fn act(a: Activation) -> Act {
    match a {
        Activation::None => Act::None,
        Activation::Relu => Act::Relu,
        Activation::Relu6 => Act::Relu6,
        Activation::ReluN1To1 => Act::ReluN1To1,
    }
}

/// A dispatch of `params`' kernel over `bindings`.
fn dispatch<P: KernelParams>(l: &mut Lowering<'_, '_>, params: &P, bindings: &[TensorId]) {
    let mut words = Vec::new();
    params.encode(&mut words);
    let operands: Vec<_> = bindings.iter().map(|t| l.operand(*t)).collect();
    l.dispatch(P::KERNEL, &words, &operands);
}

/// A constant of `values` as little-endian `i32`s.
pub(crate) fn i32_constant(
    l: &mut Lowering<'_, '_>,
    name: &str,
    values: &[i32],
) -> hal_core::module::Operand {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    l.constant(name, &bytes)
}

/// The bias of an int8 weighted op with the input zero point folded in, so the kernel's
/// inner loop multiplies raw int8 values: `bias[c] + input_offset * Σ (w + filter_offset)`
/// over output channel `c`'s weights, in the wrapping int32 arithmetic the kernels
/// accumulate in (the same sum, reordered). `None` where there is nothing to fold (a zero
/// input offset) or the weights or bias are not constants the importer can read.
pub(crate) fn folded_bias(
    l: &Lowering<'_, '_>,
    weights: TensorId,
    bias: Option<TensorId>,
    channels: usize,
    input_offset: i32,
    filter_offset: i32,
) -> Option<Vec<i32>> {
    if input_offset == 0 || channels == 0 {
        return None;
    }
    let w = l.graph.tensor(weights).data?;
    if w.len() % channels != 0 {
        return None;
    }
    let mut folded = match bias {
        None => vec![0i32; channels],
        Some(b) => {
            let b = l.graph.tensor(b);
            let bytes = b.data?;
            if b.element_type != ElementType::Int32 || bytes.len() != channels * 4 {
                return None;
            }
            bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        }
    };
    for (sum, row) in folded.iter_mut().zip(w.chunks_exact(w.len() / channels)) {
        let weights: i32 = row.iter().fold(0i32, |acc, &v| {
            acc.wrapping_add(i32::from(v as i8).wrapping_add(filter_offset))
        });
        *sum = sum.wrapping_add(input_offset.wrapping_mul(weights));
    }
    Some(folded)
}

/// `weights` (`outputs` rows of `per_output` elements of `element` bytes: OHWI)
/// transposed so that the `outputs` values of each `(h, w, i)` lie together: HWIO.
fn ohwi_to_hwio(weights: &[u8], outputs: usize, per_output: usize, element: usize) -> Vec<u8> {
    let mut out = vec![0u8; weights.len()];
    let row_bytes = (per_output * element).max(1);
    for (o, row) in weights.chunks_exact(row_bytes).enumerate() {
        for (t, v) in row.chunks_exact(element).enumerate() {
            let at = (t * outputs + o) * element;
            out[at..at + element].copy_from_slice(v);
        }
    }
    out
}

/// Per-channel (or per-tensor) multipliers and shifts of a weighted int8 op with
/// `channels` outputs.
pub(crate) fn channel_requantization(
    l: &Lowering<'_, '_>,
    op: &Op,
    input: TensorId,
    weights: TensorId,
    output: TensorId,
    channels: usize,
) -> Result<(Vec<i32>, Vec<i32>), LowerError> {
    let (si, _) = per_tensor(l, op, input)?;
    let (so, _) = per_tensor(l, op, output)?;
    let scales: Vec<f32> = match &l.graph.tensor(weights).quantization {
        Some(q) => q.scales().to_vec(),
        None => return Err(l.invalid(op, "int8 weights without quantization".into())),
    };
    let mut multipliers = vec![0i32; channels];
    let mut shifts = vec![0i32; channels];
    per_channel_multipliers(si, &scales, so, &mut multipliers, &mut shifts)
        .map_err(|e| l.invalid(op, e.to_string()))?;
    Ok((multipliers, shifts))
}

/// [`channel_requantization`] as two constants.
fn requantization(
    l: &mut Lowering<'_, '_>,
    op: &Op,
    input: TensorId,
    weights: TensorId,
    output: TensorId,
    channels: usize,
) -> Result<(hal_core::module::Operand, hal_core::module::Operand), LowerError> {
    let (multipliers, shifts) = channel_requantization(l, op, input, weights, output, channels)?;
    let name = format!("op{}", op.index);
    Ok((
        i32_constant(l, &format!("{name}.multipliers"), &multipliers),
        i32_constant(l, &format!("{name}.shifts"), &shifts),
    ))
}

fn fully_connected(
    l: &mut Lowering<'_, '_>,
    op: &Op,
    activation: Activation,
) -> Result<(), LowerError> {
    let input = l.input(op, 0)?;
    let weights = l.input(op, 1)?;
    let bias = op.inputs.get(2).copied().flatten();
    let output = op.outputs[0];
    let kernel = kerr(op);
    let w = l.graph.tensor(weights);
    let (output_depth, accum_depth) = (w.shape[0], w.shape.get(1).copied().unwrap_or(1));
    let batches = l.graph.tensor(input).num_elements() / accum_depth.max(1);
    let shape = FullyConnectedShape {
        batches,
        accum_depth,
        output_depth,
        has_bias: bias.is_some(),
    };
    let (input_op, weights_op, output_op) =
        (l.operand(input), l.operand(weights), l.operand(output));
    // Without a bias, binding 2 is never read: the weights stand in. A bias folded with
    // the input offset replaces the model's (made only where it is not).
    let unfolded_bias = |l: &mut Lowering<'_, '_>| match bias {
        Some(b) => l.operand(b),
        None => weights_op,
    };
    match l.graph.tensor(input).element_type {
        ElementType::Int8 => {
            let (si, zi) = per_tensor(l, op, input)?;
            let (so, zo) = per_tensor(l, op, output)?;
            let q = l.graph.tensor(weights).quantization.clone();
            let per_channel =
                matches!(&q, Some(Quantization::PerChannel { scales, .. }) if scales.len() > 1);
            let zw = q
                .as_ref()
                .and_then(|q| q.zero_points().first().copied())
                .unwrap_or(0) as i32;
            let (act_min, act_max) = act(activation).range_s8(so, zo).map_err(kernel)?;
            let mut p = FullyConnectedS8 {
                shape,
                input_offset: -zi,
                filter_offset: -zw,
                output_offset: zo,
                act_min,
                act_max,
                per_channel,
            };
            let bias_operand = match folded_bias(l, weights, bias, output_depth, -zi, -zw) {
                Some(folded) => {
                    p.input_offset = 0;
                    p.shape.has_bias = true;
                    i32_constant(l, &format!("op{}.bias", op.index), &folded)
                }
                None => unfolded_bias(l),
            };
            let (m, s) = if per_channel {
                requantization(l, op, input, weights, output, output_depth)?
            } else {
                let sw = q
                    .as_ref()
                    .and_then(|q| q.scales().first().copied())
                    .unwrap_or(1.0);
                let (m, s) = FullyConnectedS8::per_tensor_multiplier(si, sw, so);
                let name = format!("op{}", op.index);
                (
                    i32_constant(l, &format!("{name}.multiplier"), &[m]),
                    i32_constant(l, &format!("{name}.shift"), &[s]),
                )
            };
            let mut words = Vec::new();
            p.encode(&mut words);
            l.dispatch(
                FullyConnectedS8::KERNEL,
                &words,
                &[input_op, weights_op, bias_operand, m, s, output_op],
            );
        }
        _ => {
            let (act_min, act_max) = act(activation).range_f32();
            let p = FullyConnectedF32 {
                shape,
                act_min,
                act_max,
            };
            let mut words = Vec::new();
            p.encode(&mut words);
            let bias_operand = unfolded_bias(l);
            l.dispatch(
                FullyConnectedF32::KERNEL,
                &words,
                &[input_op, weights_op, bias_operand, output_op],
            );
        }
    }
    Ok(())
}

/// TFLM's padding and window for a 2-D op over an NHWC input.
pub(crate) fn window(
    padding: Padding,
    stride: Hw,
    dilation: Hw,
    input: &[usize],
    filter: (usize, usize),
) -> Window {
    let scheme = match padding {
        Padding::Same => Pad2d::Same,
        Padding::Valid => Pad2d::Valid,
    };
    let v = compute_padding_height_width(
        stride.h as i32,
        stride.w as i32,
        dilation.h as i32,
        dilation.w as i32,
        input[1] as i32,
        input[2] as i32,
        filter.0 as i32,
        filter.1 as i32,
        scheme,
    );
    Window {
        stride_height: stride.h,
        stride_width: stride.w,
        dilation_height: dilation.h,
        dilation_width: dilation.w,
        pad_height: v.height.max(0) as usize,
        pad_width: v.width.max(0) as usize,
    }
}

#[allow(clippy::too_many_arguments)]
fn conv2d(
    l: &mut Lowering<'_, '_>,
    op: &Op,
    padding: Padding,
    stride: Hw,
    dilation: Hw,
    depth_multiplier: Option<usize>,
    activation: Activation,
) -> Result<(), LowerError> {
    let input = l.input(op, 0)?;
    let weights = l.input(op, 1)?;
    let bias = op.inputs.get(2).copied().flatten();
    let output = op.outputs[0];
    let kernel = kerr(op);
    let is = l.graph.tensor(input).shape.clone();
    let ws = l.graph.tensor(weights).shape.clone();
    let os = l.graph.tensor(output).shape.clone();
    if is.len() != 4 || ws.len() != 4 || os.len() != 4 {
        return Err(l.invalid(op, "needs 4-D input, filter and output".into()));
    }
    let win = window(padding, stride, dilation, &is, (ws[1], ws[2]));
    let out_depth = os[3];
    let int8 = l.graph.tensor(input).element_type == ElementType::Int8;
    // Where the target's int8 convolution reads OHWI, a depthwise convolution over one
    // input channel runs as that convolution: its filter `[1, h, w, M]` transposed to
    // `[M, h, w, 1]` (made at import), the same products, per-channel requantization, bias
    // and clamp for each output channel.
    let depthwise_as_conv = (int8
        && l.options.int8_conv_ohwi
        && depth_multiplier.is_some()
        && is[3] == 1
        && ws[0] == 1
        && ws[3] == out_depth)
        .then(|| {
            l.graph
                .tensor(weights)
                .data
                .filter(|w| w.len() == ws.iter().product::<usize>())
                .map(|w| ohwi_to_hwio(w, ws[1] * ws[2], out_depth, 1))
        })
        .flatten();
    let (depth_multiplier, ws) = match depthwise_as_conv {
        Some(_) => (None, vec![out_depth, ws[1], ws[2], 1]),
        None => (depth_multiplier, ws),
    };
    // A convolution without groups reads its filter transposed to HWIO (made at import,
    // in place of TFLite's OHWI; a filter tensor another op also reads is kept in both),
    // unless the target's int8 kernel reads OHWI (`LowerOptions::int8_conv_ohwi`).
    let element = if int8 { 1 } else { 4 };
    let keep_ohwi = int8 && l.options.int8_conv_ohwi;
    let hwio = if depth_multiplier.is_none() && ws[3] == is[3] && !keep_ohwi {
        l.graph
            .tensor(weights)
            .data
            .filter(|w| w.len() == ws.iter().product::<usize>() * element)
            .map(|w| ohwi_to_hwio(w, ws[0], ws[1] * ws[2] * ws[3], element))
    } else {
        None
    };
    let input_op = l.operand(input);
    let weights_op = match (&hwio, &depthwise_as_conv) {
        (Some(t), _) => {
            let name = format!("op{}.filter_hwio", op.index);
            l.constant(&name, t)
        }
        (None, Some(t)) => {
            let name = format!("op{}.filter_ohwi", op.index);
            l.constant(&name, t)
        }
        (None, None) => l.operand(weights),
    };
    let output_op = l.operand(output);
    let mut words = Vec::new();
    let name;
    // Binding 2, the bias, is settled below: folded with the input offset, the model's,
    // or (without a bias, never read) the filter standing in.
    let mut folded_operand = None;
    let mut bindings = vec![input_op, weights_op, weights_op];
    let (offsets, range_s8, range_f32) = if int8 {
        let (_, zi) = per_tensor(l, op, input)?;
        let (so, zo) = per_tensor(l, op, output)?;
        let (m, s) = requantization(l, op, input, weights, output, out_depth)?;
        bindings.extend([m, s]);
        (
            (-zi, zo),
            act(activation).range_s8(so, zo).map_err(kernel)?,
            (0.0, 0.0),
        )
    } else {
        ((0, 0), (0, 0), act(activation).range_f32())
    };
    bindings.push(output_op);
    match depth_multiplier {
        None => {
            let shape = Conv2dShape {
                batches: is[0],
                input_height: is[1],
                input_width: is[2],
                input_depth: is[3],
                filter_height: ws[1],
                filter_width: ws[2],
                filter_depth: ws[3],
                output_height: os[1],
                output_width: os[2],
                output_depth: out_depth,
                window: win,
                has_bias: bias.is_some(),
            };
            if int8 {
                let mut p = Conv2dS8 {
                    shape,
                    filter_hwio: hwio.is_some(),
                    input_offset: offsets.0,
                    output_offset: offsets.1,
                    act_min: range_s8.0,
                    act_max: range_s8.1,
                };
                // Where every tap of every output lies inside the input, the input offset
                // multiplies the same weights everywhere and folds into the bias.
                // (The folding sums the model's filter tensor as OHWI rows: not a
                // transposed depthwise filter's.)
                let folded = if shape.taps_inside_input() && depthwise_as_conv.is_none() {
                    folded_bias(l, weights, bias, out_depth, offsets.0, 0)
                } else {
                    None
                };
                if let Some(folded) = folded {
                    folded_operand =
                        Some(i32_constant(l, &format!("op{}.bias", op.index), &folded));
                    p.input_offset = 0;
                    p.shape.has_bias = true;
                }
                p.encode(&mut words);
                name = Conv2dS8::KERNEL;
            } else {
                let p = Conv2dF32 {
                    shape,
                    filter_hwio: hwio.is_some(),
                    act_min: range_f32.0,
                    act_max: range_f32.1,
                };
                p.encode(&mut words);
                name = Conv2dF32::KERNEL;
            }
        }
        Some(multiplier) => {
            let shape = DepthwiseConv2dShape {
                batches: is[0],
                input_height: is[1],
                input_width: is[2],
                input_depth: is[3],
                depth_multiplier: multiplier,
                filter_height: ws[1],
                filter_width: ws[2],
                output_height: os[1],
                output_width: os[2],
                window: win,
                has_bias: bias.is_some(),
            };
            if int8 {
                let p = DepthwiseConv2dS8 {
                    shape,
                    input_offset: offsets.0,
                    output_offset: offsets.1,
                    act_min: range_s8.0,
                    act_max: range_s8.1,
                };
                p.encode(&mut words);
                name = DepthwiseConv2dS8::KERNEL;
            } else {
                let p = DepthwiseConv2dF32 {
                    shape,
                    act_min: range_f32.0,
                    act_max: range_f32.1,
                };
                p.encode(&mut words);
                name = DepthwiseConv2dF32::KERNEL;
            }
        }
    }
    bindings[2] = match (folded_operand, bias) {
        (Some(folded), _) => folded,
        (None, Some(b)) => l.operand(b),
        (None, None) => weights_op,
    };
    l.dispatch(name, &words, &bindings);
    Ok(())
}

fn pool(
    l: &mut Lowering<'_, '_>,
    op: &Op,
    o: &crate::op::Pool2dOptions,
    average: bool,
) -> Result<(), LowerError> {
    let input = l.input(op, 0)?;
    let output = op.outputs[0];
    let kernel = kerr(op);
    let is = l.graph.tensor(input).shape.clone();
    let os = l.graph.tensor(output).shape.clone();
    if is.len() != 4 || os.len() != 4 {
        return Err(l.invalid(op, "needs 4-D input and output".into()));
    }
    let win = window(
        o.padding,
        o.stride,
        Hw { h: 1, w: 1 },
        &is,
        (o.filter.h, o.filter.w),
    );
    let shape = Pool2dShape {
        batches: is[0],
        input_height: is[1],
        input_width: is[2],
        depth: is[3],
        output_height: os[1],
        output_width: os[2],
        filter_height: o.filter.h,
        filter_width: o.filter.w,
        stride_height: o.stride.h,
        stride_width: o.stride.w,
        pad_height: win.pad_height,
        pad_width: win.pad_width,
    };
    if l.graph.tensor(input).element_type == ElementType::Int8 {
        let (so, zo) = per_tensor(l, op, output)?;
        let (act_min, act_max) = act(o.activation).range_s8(so, zo).map_err(kernel)?;
        if average {
            dispatch(
                l,
                &AveragePool2dS8 {
                    shape,
                    act_min,
                    act_max,
                },
                &[input, output],
            );
        } else {
            dispatch(
                l,
                &MaxPool2dS8 {
                    shape,
                    act_min,
                    act_max,
                },
                &[input, output],
            );
        }
    } else {
        let (act_min, act_max) = act(o.activation).range_f32();
        if average {
            dispatch(
                l,
                &AveragePool2dF32 {
                    shape,
                    act_min,
                    act_max,
                },
                &[input, output],
            );
        } else {
            dispatch(
                l,
                &MaxPool2dF32 {
                    shape,
                    act_min,
                    act_max,
                },
                &[input, output],
            );
        }
    }
    Ok(())
}

fn elementwise(
    l: &mut Lowering<'_, '_>,
    op: &Op,
    activation: Activation,
    add: bool,
) -> Result<(), LowerError> {
    let a = l.input(op, 0)?;
    let b = l.input(op, 1)?;
    let output = op.outputs[0];
    let kernel = kerr(op);
    let shape =
        BroadcastShape::new(&l.graph.tensor(a).shape, &l.graph.tensor(b).shape).map_err(kernel)?;
    if l.graph.tensor(a).element_type == ElementType::Int8 {
        let (qa, qb, qo) = (
            per_tensor(l, op, a)?,
            per_tensor(l, op, b)?,
            per_tensor(l, op, output)?,
        );
        if add {
            let p = AddS8::from_quantization(shape, qa, qb, qo, act(activation)).map_err(kernel)?;
            dispatch(l, &p, &[a, b, output]);
        } else {
            let p = MulS8::from_quantization(shape, qa, qb, qo, act(activation)).map_err(kernel)?;
            dispatch(l, &p, &[a, b, output]);
        }
    } else {
        let (act_min, act_max) = act(activation).range_f32();
        if add {
            dispatch(
                l,
                &AddF32 {
                    shape,
                    act_min,
                    act_max,
                },
                &[a, b, output],
            );
        } else {
            dispatch(
                l,
                &MulF32 {
                    shape,
                    act_min,
                    act_max,
                },
                &[a, b, output],
            );
        }
    }
    Ok(())
}

/// A kernel contract's refusal, as an error naming `op`.
pub(crate) fn kerr(op: &Op) -> impl Fn(KernelError) -> LowerError + Copy + '_ {
    move |e| LowerError::Invalid {
        site: site(op),
        problem: e.to_string(),
    }
}
