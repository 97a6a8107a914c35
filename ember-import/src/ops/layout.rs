//! RESHAPE, PAD, PADV2, MEAN, TRANSPOSE, CONCATENATION and STRIDED_SLICE: ops that move,
//! select or reduce values along dimensions, most with their parameters in constant inputs.
//! RESHAPE lowers to a view of its input: neither a step nor bytes. What the other layout
//! families share lives here too ([`same_quantization`], [`axis_index`],
//! [`dispatch_slice`]).

use crate::check::{options, Arg, Ctx};
use crate::element::ElementType::{self, Float16, Float32, Int16, Int32, Int64, Int8, Uint8};
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Activation, Op, OpKind, StridedSliceOptions};
use crate::tensor::{ShapeDisplay, TensorId};
use crate::tflite;
use crate::ImportError;
use ember_kernels::concatenation::Concatenation;
use ember_kernels::mean::{MeanF32, MeanS8, MeanShape};
use ember_kernels::mirror_pad::MirrorPad;
use ember_kernels::pad::Pad;
use ember_kernels::strided_slice::StridedSlice;
use ember_kernels::transpose::Transpose;
use ember_kernels::KernelParams;

pub(super) const ANY: &[ElementType] = &[Float32, Float16, Int8, Uint8, Int16, Int32, Int64];
pub(super) const ANY_TEXT: &str = "any supported type";

/// Quantized input and output share their parameters (a layout op does not requantize).
pub(super) fn same_quantization(
    ctx: &Ctx<'_, '_>,
    input: Arg<'_, '_>,
    output: Arg<'_, '_>,
) -> Result<(), ImportError> {
    if input.ty().is_quantized_integer() {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
        if input.tensor.quantization != output.tensor.quantization {
            return Err(ctx.type_err(format!("{output} is quantized differently from {input}")));
        }
    }
    Ok(())
}

/// A dimension index that may count from the end (`-1` is the last), within `rank`.
pub(super) fn axis_index(axis: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let index = if axis < 0 {
        axis.checked_add(rank)?
    } else {
        axis
    };
    (0..rank).contains(&index).then_some(index as usize)
}

/// RESHAPE: the same type and element count; where the new shape is given (a constant shape
/// input, else the `new_shape` option), it resolves (one -1 at most) to the output's shape.
pub(super) fn check_reshape(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=2, 1, 1, "inputs [input, shape?] and one output")?;
    let option_shape: Option<Vec<i64>> = match ctx.raw.options {
        None => None,
        Some(tflite::BuiltinOptionsRef::ReshapeOptions(reshape)) => reshape
            .new_shape()
            .map_err(|e| ctx.malformed(e))?
            .map(|v| v.iter().map(i64::from).collect()),
        Some(_) => return Err(ctx.bad_options("the options are not ReshapeOptions")),
    };
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    if input.tensor.num_elements() != output.tensor.num_elements() {
        return Err(ctx.shape_err(format!(
            "{output} has another number of elements than {input}"
        )));
    }
    let requested = match ctx.opt_input(1) {
        Some(shape) if shape.tensor.is_constant() => Some(ctx.const_ints(shape)?),
        // A computed shape: the output's static shape stands.
        Some(_) => None,
        None => option_shape,
    };
    if let Some(requested) = requested {
        let resolved = resolve_shape(&requested, output.tensor.num_elements());
        if resolved.as_deref() != Some(output.shape()) {
            return Err(ctx.shape_err(format!(
                "the new shape {requested:?} does not give {output}"
            )));
        }
    }
    Ok(OpKind::Reshape)
}

/// A reshape's requested shape with its -1 (at most one) worked out from `elements`.
fn resolve_shape(requested: &[i64], elements: usize) -> Option<Vec<usize>> {
    let mut known: usize = 1;
    let mut wildcard = None;
    for (index, &dim) in requested.iter().enumerate() {
        match dim {
            -1 if wildcard.is_none() => wildcard = Some(index),
            dim if dim >= 1 => known = known.checked_mul(usize::try_from(dim).ok()?)?,
            _ => return None,
        }
    }
    let mut dims: Vec<usize> = requested.iter().map(|&dim| dim.max(0) as usize).collect();
    if let Some(index) = wildcard {
        if known == 0 || elements % known != 0 {
            return None;
        }
        dims[index] = elements / known;
    }
    Some(dims)
}

/// PAD: paddings a constant `[rank, 2]` of non-negative (before, after); the output is the
/// input grown by them, of the same type and quantization.
pub(super) fn check_pad(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, paddings] and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(tflite::BuiltinOptionsRef::PadOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not PadOptions"));
    }
    check_paddings(ctx).map(|paddings| OpKind::Pad { paddings })
}

/// PADV2: PAD's rules, and the value a constant of one element of the input's type and
/// quantization (the output's zero point, or 0, where it is absent).
pub(super) fn check_padv2(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        2..=3,
        2,
        1,
        "inputs [input, paddings, constant_values?] and one output",
    )?;
    if !matches!(
        ctx.raw.options,
        None | Some(tflite::BuiltinOptionsRef::PadV2Options(_))
    ) {
        return Err(ctx.bad_options("the options are not PadV2Options"));
    }
    let paddings = check_paddings(ctx)?;
    if let Some(value) = ctx.opt_input(2) {
        let input = ctx.input(0)?;
        if !value.tensor.is_constant() || value.tensor.num_elements() != 1 {
            return Err(ctx.shape_err(format!("{value} must be a constant of one element")));
        }
        ctx.same_type(&[input, value], ANY, ANY_TEXT)?;
        same_quantization(ctx, input, value)?;
    }
    Ok(OpKind::PadV2 { paddings })
}

/// MIRROR_PAD: PAD's rules, each padding at most the dimension (less one for REFLECT, as
/// TensorFlow requires); int8 or float32 as TFLM takes them.
pub(super) fn check_mirror_pad(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, paddings] and one output")?;
    let reflect = options!(ctx, MirrorPadOptions).mode == tflite::MirrorPadMode::Reflect;
    let paddings = check_paddings(ctx)?;
    let input = ctx.input(0)?;
    ctx.same_type(&[input], &[Float32, Int8], "float32, int8")?;
    let offset = usize::from(reflect);
    for (index, (&dim, &(before, after))) in input.shape().iter().zip(&paddings).enumerate() {
        if before.max(after) + offset > dim {
            return Err(ctx.shape_err(format!(
                "{input}: dimension {index} padded by ({before}, {after}), more than {} allows",
                if reflect { "REFLECT" } else { "SYMMETRIC" }
            )));
        }
    }
    Ok(OpKind::MirrorPad { paddings, reflect })
}

/// MIRROR_PAD, int8 or float32.
pub(super) fn lower_mirror_pad(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::MirrorPad { paddings, reflect } = &op.kind else {
        return Err(lowering.invalid(op, "not a MIRROR_PAD".into()));
    };
    let (input, output, input_type) = layout_tensors(lowering, op)?;
    let pads: Vec<[i32; 2]> = paddings
        .iter()
        .map(|&(before, after)| [before as i32, after as i32])
        .collect();
    let params = MirrorPad::new(
        input_type.size(),
        *reflect,
        &lowering.graph.tensor(input).shape,
        &pads,
    )
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// PAD's and PADV2's paddings and shapes: `(before, after)` per dimension.
fn check_paddings(ctx: &Ctx<'_, '_>) -> Result<Vec<(usize, usize)>, ImportError> {
    let (input, paddings, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    if paddings.shape() != [rank, 2] {
        return Err(ctx.shape_err(format!("{paddings} should have shape [{rank}, 2]")));
    }
    let values = ctx.const_ints(paddings)?;
    let mut pairs = Vec::with_capacity(rank);
    let mut expected = Vec::with_capacity(rank);
    let pads = input.shape().iter().zip(values.chunks_exact(2)).enumerate();
    for (index, (&dim, pad)) in pads {
        let (Ok(before), Ok(after)) = (usize::try_from(pad[0]), usize::try_from(pad[1])) else {
            return Err(ctx.shape_err(format!(
                "{paddings}: dimension {index} has negative padding {pad:?}"
            )));
        };
        let grown = dim
            .checked_add(before)
            .and_then(|sum| sum.checked_add(after))
            .ok_or_else(|| ctx.shape_err(format!("{paddings}: dimension {index} overflows")))?;
        pairs.push((before, after));
        expected.push(grown);
    }
    ctx.shape_is(output, &expected)?;
    ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16, Int32],
        "float32, int8, int16, int32",
    )?;
    same_quantization(ctx, input, output)?;
    Ok(pairs)
}

/// MEAN: axes a constant of dimension indices (negative counts from the end, repeats
/// allowed); the output drops them, or keeps them as 1 with `keep_dims`.
pub(super) fn check_mean(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let (axes, keep_dims) = check_reduction(ctx)?;
    Ok(OpKind::Mean { axes, keep_dims })
}

/// A reduction's axes (a constant of dimension indices; negative counts from the end,
/// repeats allowed) and `keep_dims`; the output drops the axes, or keeps them as 1; the
/// types float32, int8 or int16. Returns the axes ascending without repeats.
pub(super) fn check_reduction(ctx: &Ctx<'_, '_>) -> Result<(Vec<usize>, bool), ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, axes] and one output")?;
    let keep_dims = options!(ctx, ReducerOptions).keep_dims;
    let (input, axes_in, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let mut axes = Vec::new();
    for value in ctx.const_ints(axes_in)? {
        let Some(axis) = axis_index(value, rank) else {
            return Err(ctx.shape_err(format!("{axes_in}: axis {value} is outside rank {rank}")));
        };
        axes.push(axis);
    }
    axes.sort_unstable();
    axes.dedup();
    let expected: Vec<usize> = input
        .shape()
        .iter()
        .enumerate()
        .filter_map(|(index, &dim)| match (axes.contains(&index), keep_dims) {
            (false, _) => Some(dim),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    ctx.shape_is(output, &expected)?;
    let ty = ctx.same_type(
        &[input, output],
        &[Float32, Int8, Int16],
        "float32, int8, int16",
    )?;
    if ty != Float32 {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
    }
    Ok((axes, keep_dims))
}

/// TRANSPOSE: the permutation a constant naming each input dimension once; output
/// dimension `i` is input dimension `perm[i]`.
pub(super) fn check_transpose(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, permutation] and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(tflite::BuiltinOptionsRef::TransposeOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not TransposeOptions"));
    }
    let (input, perm_in, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let values = ctx.const_ints(perm_in)?;
    let mut perm = Vec::with_capacity(rank);
    let mut seen = vec![false; rank];
    for &value in &values {
        match usize::try_from(value).ok().filter(|&dim| dim < rank) {
            Some(dim) if !seen[dim] => {
                seen[dim] = true;
                perm.push(dim);
            }
            _ => break,
        }
    }
    if perm.len() != rank || values.len() != rank {
        return Err(ctx.shape_err(format!(
            "{perm_in} holds {values:?}, not a permutation of {rank} dimensions"
        )));
    }
    let expected: Vec<usize> = perm.iter().map(|&dim| input.shape()[dim]).collect();
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::Transpose { perm })
}

/// CONCATENATION: inputs of the output's rank, equal outside `axis`, whose sizes along
/// `axis` add up to the output's; one type.
pub(super) fn check_concatenation(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let count = ctx.input_count();
    ctx.arity(
        1..=usize::MAX,
        count,
        1,
        "one or more inputs and one output",
    )?;
    let options = options!(ctx, ConcatenationOptions);
    let activation = ctx.activation(options.fused_activation_function)?;
    let output = ctx.output(0)?;
    let rank = output.tensor.rank();
    let axis = axis_index(options.axis.into(), rank).ok_or_else(|| {
        ctx.bad_options(format!(
            "axis {} is outside rank {rank} of {output}",
            options.axis
        ))
    })?;
    let mut args = Vec::with_capacity(count + 1);
    let mut along: usize = 0;
    for slot in 0..count {
        let arg = ctx.input(slot)?;
        let shape = arg.shape();
        let agrees = shape.len() == rank
            && shape
                .iter()
                .zip(output.shape())
                .enumerate()
                .all(|(index, (dim, out_dim))| index == axis || dim == out_dim);
        if !agrees {
            return Err(ctx.shape_err(format!("{arg} does not match {output} outside axis {axis}")));
        }
        along = along
            .checked_add(shape[axis])
            .ok_or_else(|| ctx.shape_err("the sizes along the axis overflow"))?;
        args.push(arg);
    }
    if along != output.shape()[axis] {
        return Err(ctx.shape_err(format!(
            "the inputs add up to {along} along axis {axis}, but {output} has {}",
            output.shape()[axis]
        )));
    }
    args.push(output);
    let ty = ctx.same_type(&args, ANY, ANY_TEXT)?;
    if ty.is_quantized_integer() {
        for arg in args {
            ctx.per_tensor(arg)?;
        }
    }
    Ok(OpKind::Concatenation { axis, activation })
}

/// STRIDED_SLICE: begin, end and strides constants of one value per input dimension;
/// `begin_mask`, `end_mask` and `shrink_axis_mask` as TFLite reads them (ellipsis and new
/// axes are not supported); the output has the sliced sizes, shrunk dimensions dropped.
pub(super) fn check_strided_slice(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        4..=4,
        4,
        1,
        "inputs [input, begin, end, strides] and one output",
    )?;
    let options = options!(ctx, StridedSliceOptions);
    if options.ellipsis_mask != 0 {
        return Err(ctx.unsupported("ellipsis_mask", options.ellipsis_mask, "0"));
    }
    if options.new_axis_mask != 0 {
        return Err(ctx.unsupported("new_axis_mask", options.new_axis_mask, "0"));
    }
    if options.offset {
        return Err(ctx.unsupported("offset", "true", "false"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    let rank = input.tensor.rank();
    let mut bounds = Vec::with_capacity(3);
    for slot in 1..=3 {
        let arg = ctx.input(slot)?;
        let values = ctx.const_ints(arg)?;
        if values.len() != rank {
            return Err(ctx.shape_err(format!(
                "{arg} holds {} values for {rank} dimensions",
                values.len()
            )));
        }
        bounds.push(values);
    }
    let bit = |mask: i32, index: usize| index < 32 && (mask >> index) & 1 == 1;
    let mut slice = StridedSliceOptions {
        begin: Vec::with_capacity(rank),
        end: Vec::with_capacity(rank),
        strides: Vec::with_capacity(rank),
        shrink: Vec::with_capacity(rank),
    };
    let mut expected = Vec::with_capacity(rank);
    for (index, &size_in) in input.shape().iter().enumerate() {
        let dim = size_in as i128;
        let stride = i128::from(bounds[2][index]);
        if stride == 0 {
            return Err(ctx.bad_options(format!("stride {index} is 0")));
        }
        // TFLite's clamped index: negative counts from the end, then into range.
        let clamp = |bound: i64| {
            let bound = i128::from(bound);
            let bound = if bound < 0 { bound + dim } else { bound };
            if stride > 0 {
                bound.clamp(0, dim)
            } else {
                bound.clamp(-1, dim - 1)
            }
        };
        let shrink = bit(options.shrink_axis_mask, index);
        let (start, end, size) = if shrink {
            let begin = i128::from(bounds[0][index]);
            let start = if begin < 0 { begin + dim } else { begin };
            if !(0..dim).contains(&start) {
                return Err(ctx.shape_err(format!(
                    "dimension {index} shrinks to index {} outside {size_in}",
                    bounds[0][index]
                )));
            }
            (start, start + 1, 1)
        } else {
            let start = if bit(options.begin_mask, index) {
                if stride > 0 {
                    0
                } else {
                    dim - 1
                }
            } else {
                clamp(bounds[0][index])
            };
            let end = if bit(options.end_mask, index) {
                if stride > 0 {
                    dim
                } else {
                    -1
                }
            } else {
                clamp(bounds[1][index])
            };
            let span = if stride > 0 { end - start } else { start - end };
            let step = stride.abs();
            let size = if span <= 0 {
                0
            } else {
                (span + step - 1) / step
            };
            (start, end, size)
        };
        // All three lie within [-1, dim] or are ±the stride, from i64 values: they fit.
        slice.begin.push(start as i64);
        slice.end.push(end as i64);
        slice.strides.push(stride as i64);
        slice.shrink.push(shrink);
        if !shrink {
            expected.push(size as usize);
        }
    }
    if output.shape() != expected.as_slice() {
        return Err(ctx.shape_err(format!(
            "{output} should have shape {} after slicing {input}",
            ShapeDisplay(&expected)
        )));
    }
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::StridedSlice(slice))
}

/// RESHAPE: a view of its input, no step (a model output gets its input's bytes copied).
pub(super) fn lower_reshape(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let input = lowering.input(op, 0)?;
    let source = lowering.operand(input);
    lowering.view(op.outputs[0], source);
    Ok(())
}

/// An op's input and output, and the input's element type.
pub(super) fn layout_tensors(
    lowering: &Lowering<'_, '_>,
    op: &Op,
) -> Result<(TensorId, TensorId, ElementType), LowerError> {
    let input = lowering.input(op, 0)?;
    Ok((input, op.outputs[0], lowering.element_type(input)))
}

/// PAD and PADV2, int8 or float32: padded with PADV2's constant where it has one, else
/// the zero point (int8) or 0 (float32).
pub(super) fn lower_pad(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let (OpKind::Pad { paddings } | OpKind::PadV2 { paddings }) = &op.kind else {
        return Err(lowering.invalid(op, "not a PAD".into()));
    };
    let (input, output, input_type) = layout_tensors(lowering, op)?;
    let constant = op.inputs.get(2).copied().flatten();
    let value = match constant.and_then(|tensor| lowering.graph.tensor(tensor).data) {
        // The constant's bytes, as the kernel fills an element (little-endian).
        Some(bytes) => bytes
            .iter()
            .take(4)
            .rev()
            .fold(0u32, |word, &byte| word << 8 | u32::from(byte)),
        None if input_type == Int8 => lowering.per_tensor(op, input)?.1 as u8 as u32,
        None => 0,
    };
    let pads: Vec<[i32; 2]> = paddings
        .iter()
        .map(|&(before, after)| [before as i32, after as i32])
        .collect();
    let params = Pad::new(
        input_type.size(),
        value,
        &lowering.graph.tensor(input).shape,
        &pads,
    )
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// MEAN, int8 or float32.
pub(super) fn lower_mean(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Mean { axes, .. } = &op.kind else {
        return Err(lowering.invalid(op, "not a MEAN".into()));
    };
    let (input, output, input_type) = layout_tensors(lowering, op)?;
    let dims = &lowering.graph.tensor(input).shape;
    let axes: Vec<i32> = axes.iter().map(|&axis| axis as i32).collect();
    let shape = MeanShape::new(dims, &axes).map_err(kernel_error(op))?;
    if input_type == Int8 {
        let (input_scale, input_zero_point) = lowering.per_tensor(op, input)?;
        let (output_scale, output_zero_point) = lowering.per_tensor(op, output)?;
        let (multiplier, shift) = MeanS8::multiplier(input_scale, output_scale);
        let params = MeanS8 {
            shape,
            input_zero_point,
            output_zero_point,
            multiplier,
            shift,
        };
        lowering.dispatch_params(&params, &[input, output]);
    } else {
        lowering.dispatch_params(&MeanF32 { shape }, &[input, output]);
    }
    Ok(())
}

/// TRANSPOSE, int8 or float32.
pub(super) fn lower_transpose(lowering: &mut Lowering<'_, '_>, op: &Op) -> Result<(), LowerError> {
    let OpKind::Transpose { perm } = &op.kind else {
        return Err(lowering.invalid(op, "not a TRANSPOSE".into()));
    };
    let (input, output, input_type) = layout_tensors(lowering, op)?;
    let perm: Vec<i32> = perm.iter().map(|&dim| dim as i32).collect();
    let params = Transpose::new(
        input_type.size(),
        &lowering.graph.tensor(input).shape,
        &perm,
    )
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// STRIDED_SLICE, int8 or float32.
pub(super) fn lower_strided_slice(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::StridedSlice(slice) = &op.kind else {
        return Err(lowering.invalid(op, "not a STRIDED_SLICE".into()));
    };
    let (input, output, _) = layout_tensors(lowering, op)?;
    dispatch_slice(lowering, op, input, output, slice)
}

/// One `strided_slice` step: `output` is `slice` of `input` (bounds resolved as the
/// importer resolves them).
pub(super) fn dispatch_slice(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    input: TensorId,
    output: TensorId,
    slice: &StridedSliceOptions,
) -> Result<(), LowerError> {
    // The importer's bounds are resolved indices; an end of -1 (a negative stride down to
    // index 0 inclusive) is no index the kernel's resolution reads as such (it counts
    // negatives from the end), so those axes go by `end_mask`, which stops a negative
    // stride past index 0.
    let down_to_zero = slice
        .end
        .iter()
        .enumerate()
        .fold(0u32, |mask, (axis, &end)| {
            mask | (u32::from(end < 0) << axis)
        });
    let narrow = |values: &[i64]| values.iter().map(|&v| v as i32).collect::<Vec<i32>>();
    let shrink = slice
        .shrink
        .iter()
        .enumerate()
        .fold(0u32, |mask, (axis, &shrunk)| {
            mask | (u32::from(shrunk) << axis)
        });
    let params = StridedSlice::resolve(
        lowering.element_type(input).size(),
        &lowering.graph.tensor(input).shape,
        &narrow(&slice.begin),
        &narrow(&slice.end),
        &narrow(&slice.strides),
        0,
        down_to_zero,
        shrink,
    )
    .map_err(kernel_error(op))?;
    lowering.dispatch_params(&params, &[input, output]);
    Ok(())
}

/// CONCATENATION, int8 or float32, without a fused activation.
pub(super) fn lower_concatenation(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::Concatenation { axis, activation } = op.kind else {
        return Err(lowering.invalid(op, "not a CONCATENATION".into()));
    };
    let (_, output, input_type) = layout_tensors(lowering, op)?;
    if activation != Activation::None {
        return Err(lowering.unsupported(op, "CONCATENATION with a fused activation".into()));
    }
    let inputs: Vec<TensorId> = op.inputs.iter().flatten().copied().collect();
    let graph = lowering.graph;
    let sizes: Vec<usize> = inputs
        .iter()
        .map(|tensor| graph.tensor(*tensor).shape[axis])
        .collect();
    dispatch_concatenation(lowering, op, &inputs, output, input_type, &sizes, axis)
}

/// One `concatenation` step: `output` (of `element` values) is `inputs` joined along
/// `axis`, input `i` holding `sizes[i]` of it (at most ten inputs: the kernel's bindings).
pub(super) fn dispatch_concatenation(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
    inputs: &[TensorId],
    output: TensorId,
    element: ElementType,
    sizes: &[usize],
    axis: usize,
) -> Result<(), LowerError> {
    let params = Concatenation::new(
        element.size(),
        &lowering.graph.tensor(output).shape,
        sizes,
        axis as i32,
    )
    .map_err(kernel_error(op))?;
    let mut words = Vec::new();
    params.encode(&mut words);
    let mut bindings: Vec<_> = inputs
        .iter()
        .map(|tensor| lowering.operand(*tensor))
        .collect();
    bindings.push(lowering.operand(output));
    lowering.dispatch(Concatenation::KERNEL, &words, &bindings);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{axis_index, resolve_shape};

    #[test]
    fn reshape_wildcard() {
        assert_eq!(resolve_shape(&[-1, 64], 128), Some(vec![2, 64]));
        assert_eq!(resolve_shape(&[1, 2], 2), Some(vec![1, 2]));
        assert_eq!(resolve_shape(&[-1, -1], 4), None);
        assert_eq!(resolve_shape(&[-1, 3], 4), None);
        assert_eq!(resolve_shape(&[0, -1], 4), None);
    }

    #[test]
    fn axes() {
        assert_eq!(axis_index(-1, 4), Some(3));
        assert_eq!(axis_index(4, 4), None);
        assert_eq!(axis_index(-5, 4), None);
        assert_eq!(axis_index(i64::MIN, 4), None);
    }
}
