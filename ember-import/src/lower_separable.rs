//! A DEPTHWISE_CONV_2D and the 1×1 CONV_2D after it lowered as one step,
//! `separable_conv2d_s8` ([`LowerOptions::fuse_separable`](crate::LowerOptions)): one
//! dispatch, no barrier between the layers, no middle tensor in the arena.

use crate::element::ElementType;
use crate::lower::{per_tensor, LowerError, Lowering};
use crate::lower_ops::{act, channel_requantization, folded_bias, i32_constant, kerr, window};
use crate::op::{Op, OpKind};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
use ember_kernels::separable_conv2d::{SeparableConv2dS8, MAX_MIDDLE_DEPTH};
use ember_kernels::KernelParams;

/// Lowers `depthwise` and `pointwise` (the op after it) as one separable convolution where
/// they form one: both int8 with per-tensor activations, the depthwise result read by the
/// pointwise convolution alone and not a model output, the pointwise convolution 1×1 with
/// stride 1 and no groups over constant weights, at most [`MAX_MIDDLE_DEPTH`] middle
/// channels. Returns whether it did; where not, nothing was added and each op lowers on
/// its own (reporting its own errors).
pub(crate) fn lower_separable(
    l: &mut Lowering<'_, '_>,
    depthwise: &Op,
    pointwise: &Op,
) -> Result<bool, LowerError> {
    let Some(plan) = Plan::of(l, depthwise, pointwise) else {
        return Ok(false);
    };
    let g = l.graph;
    let kernel = kerr(depthwise);
    let (input, middle, output) = (plan.input, plan.middle, plan.output);
    let (is, ms) = (&g.tensor(input).shape, &g.tensor(middle).shape);
    let ws = &g.tensor(plan.depthwise_weights).shape;
    let md = ms[3];
    let od = g.tensor(output).shape[3];
    let shape = DepthwiseConv2dShape {
        batches: is[0],
        input_height: is[1],
        input_width: is[2],
        input_depth: is[3],
        depth_multiplier: plan.multiplier,
        filter_height: ws[1],
        filter_width: ws[2],
        output_height: ms[1],
        output_width: ms[2],
        window: window(plan.padding, plan.stride, plan.dilation, is, (ws[1], ws[2])),
        has_bias: plan.depthwise_bias.is_some(),
    };
    let (_, zi) = per_tensor(l, depthwise, input)?;
    let (sm, zm) = per_tensor(l, depthwise, middle)?;
    let (so, zo) = per_tensor(l, pointwise, output)?;
    let first_range = act(plan.depthwise_activation)
        .range_s8(sm, zm)
        .map_err(kernel)?;
    let second_range = act(plan.pointwise_activation)
        .range_s8(so, zo)
        .map_err(kerr(pointwise))?;
    // Each output stage packed as biases, multipliers, shifts.
    let (m, s) = channel_requantization(l, depthwise, input, plan.depthwise_weights, middle, md)?;
    let mut first = match plan.depthwise_bias {
        Some(bias) => bias,
        None => vec![0; md],
    };
    first.extend(m);
    first.extend(s);
    // The middle zero point folds into the pointwise bias, as a lone 1×1 convolution's does.
    let (m, s) = channel_requantization(l, pointwise, middle, plan.pointwise_weights, output, od)?;
    let bias = plan.pointwise_bias.unwrap_or_else(|| vec![0; od]);
    let mut second = folded_bias(
        l,
        plan.pointwise_weights,
        pointwise.inputs.get(2).copied().flatten(),
        od,
        -zm,
        0,
    )
    .unwrap_or(bias);
    second.extend(m);
    second.extend(s);
    let p = SeparableConv2dS8 {
        depthwise: DepthwiseConv2dS8 {
            shape,
            input_offset: -zi,
            output_offset: zm,
            act_min: first_range.0,
            act_max: first_range.1,
        },
        output_depth: od,
        input_offset: 0,
        output_offset: zo,
        act_min: second_range.0,
        act_max: second_range.1,
    };
    let mut words = Vec::new();
    p.encode(&mut words);
    let name = format!("op{}", depthwise.index);
    let bindings = [
        l.operand(input),
        l.operand(plan.depthwise_weights),
        l.operand(plan.pointwise_weights),
        i32_constant(l, &format!("{name}.depthwise_stage"), &first),
        i32_constant(l, &format!("{name}.pointwise_stage"), &second),
        l.operand(output),
    ];
    l.dispatch(SeparableConv2dS8::KERNEL, &words, &bindings);
    Ok(true)
}

/// What a fusable pair reads, found by [`Plan::of`].
struct Plan {
    input: crate::TensorId,
    middle: crate::TensorId,
    output: crate::TensorId,
    depthwise_weights: crate::TensorId,
    pointwise_weights: crate::TensorId,
    depthwise_bias: Option<Vec<i32>>,
    pointwise_bias: Option<Vec<i32>>,
    multiplier: usize,
    padding: crate::Padding,
    stride: crate::Hw,
    dilation: crate::Hw,
    depthwise_activation: crate::Activation,
    pointwise_activation: crate::Activation,
}

impl Plan {
    /// The pair's tensors and options, where the two form a separable convolution.
    fn of(l: &Lowering<'_, '_>, depthwise: &Op, pointwise: &Op) -> Option<Self> {
        let g = l.graph;
        let (OpKind::DepthwiseConv2d(d), OpKind::Conv2d(c)) = (&depthwise.kind, &pointwise.kind)
        else {
            return None;
        };
        let input = (*depthwise.inputs.first()?)?;
        let depthwise_weights = (*depthwise.inputs.get(1)?)?;
        let middle = *depthwise.outputs.first()?;
        let pointwise_weights = (*pointwise.inputs.get(1)?)?;
        let output = *pointwise.outputs.first()?;
        let int8 = |t| g.tensor(t).element_type == ElementType::Int8;
        if !(int8(input) && int8(middle) && int8(output) && int8(pointwise_weights)) {
            return None;
        }
        // The middle tensor is the pointwise convolution's input and nothing else's.
        let readers = g
            .ops()
            .iter()
            .flat_map(|op| op.input_ids())
            .filter(|&t| t == middle)
            .count();
        if *pointwise.inputs.first()? != Some(middle)
            || readers != 1
            || g.outputs().contains(&middle)
        {
            return None;
        }
        let (is, ms, os) = (
            &g.tensor(input).shape,
            &g.tensor(middle).shape,
            &g.tensor(output).shape,
        );
        let (ws, ps) = (
            &g.tensor(depthwise_weights).shape,
            &g.tensor(pointwise_weights).shape,
        );
        if is.len() != 4 || ms.len() != 4 || os.len() != 4 || ws.len() != 4 {
            return None;
        }
        let md = ms[3];
        let od = os[3];
        let one_by_one = ps.as_slice() == [od, 1, 1, md] && c.stride.h == 1 && c.stride.w == 1;
        if !one_by_one
            || os[..3] != ms[..3]
            || md > MAX_MIDDLE_DEPTH
            || ws[0] != 1
            || ws[3] != md
            || is[3] * d.depth_multiplier != md
            || g.tensor(pointwise_weights).data?.len() != od * md
        {
            return None;
        }
        let bias = |op: &Op, channels: usize| -> Option<Option<Vec<i32>>> {
            match op.inputs.get(2).copied().flatten() {
                None => Some(None),
                Some(b) => {
                    let t = g.tensor(b);
                    let bytes = t.data?;
                    if t.element_type != ElementType::Int32 || bytes.len() != channels * 4 {
                        return None;
                    }
                    Some(Some(
                        bytes
                            .chunks_exact(4)
                            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    ))
                }
            }
        };
        Some(Self {
            input,
            middle,
            output,
            depthwise_weights,
            pointwise_weights,
            depthwise_bias: bias(depthwise, md)?,
            pointwise_bias: bias(pointwise, od)?,
            multiplier: d.depth_multiplier,
            padding: d.padding,
            stride: d.stride,
            dilation: d.dilation,
            depthwise_activation: d.activation,
            pointwise_activation: c.activation,
        })
    }
}
