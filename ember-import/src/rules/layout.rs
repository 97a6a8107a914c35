//! RESHAPE, PAD, MEAN, TRANSPOSE, CONCATENATION and STRIDED_SLICE: ops that move, select or
//! reduce values along dimensions, most with their parameters in constant inputs.

use super::{options, Arg, Ctx};
use crate::tensor::ShapeDisplay;
use crate::tflite;
use crate::{ElementType, ImportError, OpKind, StridedSliceOptions};
use ElementType::{Float16, Float32, Int16, Int32, Int64, Int8, Uint8};

const ANY: &[ElementType] = &[Float32, Float16, Int8, Uint8, Int16, Int32, Int64];
const ANY_TEXT: &str = "any supported type";

/// Quantized input and output share their parameters (a layout op does not requantize).
fn same_quantization(
    ctx: &Ctx<'_, '_>,
    input: Arg<'_, '_>,
    output: Arg<'_, '_>,
) -> Result<(), ImportError> {
    if input.ty().is_quantized_integer() {
        ctx.per_tensor(input)?;
        ctx.per_tensor(output)?;
        if input.t.quantization != output.t.quantization {
            return Err(ctx.type_err(format!("{output} is quantized differently from {input}")));
        }
    }
    Ok(())
}

/// A dimension index that may count from the end (`-1` is the last), within `rank`.
fn axis_index(axis: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let a = if axis < 0 {
        axis.checked_add(rank)?
    } else {
        axis
    };
    (0..rank).contains(&a).then_some(a as usize)
}

/// RESHAPE: the same type and element count; where the new shape is given (a constant shape
/// input, else the `new_shape` option), it resolves (one -1 at most) to the output's shape.
pub(super) fn reshape(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(1..=2, 1, 1, "inputs [input, shape?] and one output")?;
    let option_shape: Option<Vec<i64>> = match ctx.raw.options {
        None => None,
        Some(tflite::BuiltinOptionsRef::ReshapeOptions(r)) => r
            .new_shape()
            .map_err(|e| ctx.malformed(e))?
            .map(|v| v.iter().map(i64::from).collect()),
        Some(_) => return Err(ctx.bad_options("the options are not ReshapeOptions")),
    };
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    if input.t.num_elements() != output.t.num_elements() {
        return Err(ctx.shape_err(format!(
            "{output} has another number of elements than {input}"
        )));
    }
    let requested = match ctx.opt_input(1) {
        Some(shape) if shape.t.is_constant() => Some(ctx.const_ints(shape)?),
        // A computed shape: the output's static shape stands.
        Some(_) => None,
        None => option_shape,
    };
    if let Some(requested) = requested {
        let resolved = resolve_shape(&requested, output.t.num_elements());
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
    for (i, &d) in requested.iter().enumerate() {
        match d {
            -1 if wildcard.is_none() => wildcard = Some(i),
            d if d >= 1 => known = known.checked_mul(usize::try_from(d).ok()?)?,
            _ => return None,
        }
    }
    let mut dims: Vec<usize> = requested.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = wildcard {
        if known == 0 || elements % known != 0 {
            return None;
        }
        dims[i] = elements / known;
    }
    Some(dims)
}

/// PAD: paddings a constant `[rank, 2]` of non-negative (before, after); the output is the
/// input grown by them, of the same type and quantization.
pub(super) fn pad(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, paddings] and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(tflite::BuiltinOptionsRef::PadOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not PadOptions"));
    }
    let (input, paddings, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.t.rank();
    if paddings.shape() != [rank, 2] {
        return Err(ctx.shape_err(format!("{paddings} should have shape [{rank}, 2]")));
    }
    let values = ctx.const_ints(paddings)?;
    let mut pairs = Vec::with_capacity(rank);
    let mut expected = Vec::with_capacity(rank);
    for (i, (&d, p)) in input.shape().iter().zip(values.chunks_exact(2)).enumerate() {
        let (Ok(before), Ok(after)) = (usize::try_from(p[0]), usize::try_from(p[1])) else {
            return Err(ctx.shape_err(format!(
                "{paddings}: dimension {i} has negative padding {p:?}"
            )));
        };
        let grown = d
            .checked_add(before)
            .and_then(|n| n.checked_add(after))
            .ok_or_else(|| ctx.shape_err(format!("{paddings}: dimension {i} overflows")))?;
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
    Ok(OpKind::Pad { paddings: pairs })
}

/// MEAN: axes a constant of dimension indices (negative counts from the end, repeats
/// allowed); the output drops them, or keeps them as 1 with `keep_dims`.
pub(super) fn mean(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, axes] and one output")?;
    let keep_dims = options!(ctx, ReducerOptions).keep_dims;
    let (input, axes_in, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.t.rank();
    let mut axes = Vec::new();
    for a in ctx.const_ints(axes_in)? {
        let Some(axis) = axis_index(a, rank) else {
            return Err(ctx.shape_err(format!("{axes_in}: axis {a} is outside rank {rank}")));
        };
        axes.push(axis);
    }
    axes.sort_unstable();
    axes.dedup();
    let expected: Vec<usize> = input
        .shape()
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep_dims) {
            (false, _) => Some(d),
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
    Ok(OpKind::Mean { axes, keep_dims })
}

/// TRANSPOSE: the permutation a constant naming each input dimension once; output
/// dimension `i` is input dimension `perm[i]`.
pub(super) fn transpose(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(2..=2, 2, 1, "inputs [input, permutation] and one output")?;
    if !matches!(
        ctx.raw.options,
        None | Some(tflite::BuiltinOptionsRef::TransposeOptions(_))
    ) {
        return Err(ctx.bad_options("the options are not TransposeOptions"));
    }
    let (input, perm_in, output) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
    let rank = input.t.rank();
    let values = ctx.const_ints(perm_in)?;
    let mut perm = Vec::with_capacity(rank);
    let mut seen = vec![false; rank];
    for &p in &values {
        match usize::try_from(p).ok().filter(|&p| p < rank) {
            Some(p) if !seen[p] => {
                seen[p] = true;
                perm.push(p);
            }
            _ => break,
        }
    }
    if perm.len() != rank || values.len() != rank {
        return Err(ctx.shape_err(format!(
            "{perm_in} holds {values:?}, not a permutation of {rank} dimensions"
        )));
    }
    let expected: Vec<usize> = perm.iter().map(|&p| input.shape()[p]).collect();
    ctx.shape_is(output, &expected)?;
    ctx.same_type(&[input, output], ANY, ANY_TEXT)?;
    same_quantization(ctx, input, output)?;
    Ok(OpKind::Transpose { perm })
}

/// CONCATENATION: inputs of the output's rank, equal outside `axis`, whose sizes along
/// `axis` add up to the output's; one type.
pub(super) fn concatenation(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    let n = ctx.input_count();
    ctx.arity(1..=usize::MAX, n, 1, "one or more inputs and one output")?;
    let o = options!(ctx, ConcatenationOptions);
    let activation = ctx.activation(o.fused_activation_function)?;
    let output = ctx.output(0)?;
    let rank = output.t.rank();
    let axis = axis_index(o.axis.into(), rank).ok_or_else(|| {
        ctx.bad_options(format!(
            "axis {} is outside rank {rank} of {output}",
            o.axis
        ))
    })?;
    let mut args = Vec::with_capacity(n + 1);
    let mut along: usize = 0;
    for slot in 0..n {
        let a = ctx.input(slot)?;
        let s = a.shape();
        let agrees = s.len() == rank
            && s.iter()
                .zip(output.shape())
                .enumerate()
                .all(|(i, (x, y))| i == axis || x == y);
        if !agrees {
            return Err(ctx.shape_err(format!("{a} does not match {output} outside axis {axis}")));
        }
        along = along
            .checked_add(s[axis])
            .ok_or_else(|| ctx.shape_err("the sizes along the axis overflow"))?;
        args.push(a);
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
        for a in args {
            ctx.per_tensor(a)?;
        }
    }
    Ok(OpKind::Concatenation { axis, activation })
}

/// STRIDED_SLICE: begin, end and strides constants of one value per input dimension;
/// `begin_mask`, `end_mask` and `shrink_axis_mask` as TFLite reads them (ellipsis and new
/// axes are not supported); the output has the sliced sizes, shrunk dimensions dropped.
pub(super) fn strided_slice(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        4..=4,
        4,
        1,
        "inputs [input, begin, end, strides] and one output",
    )?;
    let o = options!(ctx, StridedSliceOptions);
    if o.ellipsis_mask != 0 {
        return Err(ctx.unsupported("ellipsis_mask", o.ellipsis_mask, "0"));
    }
    if o.new_axis_mask != 0 {
        return Err(ctx.unsupported("new_axis_mask", o.new_axis_mask, "0"));
    }
    if o.offset {
        return Err(ctx.unsupported("offset", "true", "false"));
    }
    let (input, output) = (ctx.input(0)?, ctx.output(0)?);
    let rank = input.t.rank();
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
    let bit = |mask: i32, i: usize| i < 32 && (mask >> i) & 1 == 1;
    let mut opts = StridedSliceOptions {
        begin: Vec::with_capacity(rank),
        end: Vec::with_capacity(rank),
        strides: Vec::with_capacity(rank),
        shrink: Vec::with_capacity(rank),
    };
    let mut expected = Vec::with_capacity(rank);
    for (i, &d) in input.shape().iter().enumerate() {
        let dim = d as i128;
        let stride = i128::from(bounds[2][i]);
        if stride == 0 {
            return Err(ctx.bad_options(format!("stride {i} is 0")));
        }
        // TFLite's clamped index: negative counts from the end, then into range.
        let clamp = |v: i64| {
            let v = i128::from(v);
            let v = if v < 0 { v + dim } else { v };
            if stride > 0 {
                v.clamp(0, dim)
            } else {
                v.clamp(-1, dim - 1)
            }
        };
        let shrink = bit(o.shrink_axis_mask, i);
        let (start, end, size) = if shrink {
            let b = i128::from(bounds[0][i]);
            let start = if b < 0 { b + dim } else { b };
            if !(0..dim).contains(&start) {
                return Err(ctx.shape_err(format!(
                    "dimension {i} shrinks to index {} outside {d}",
                    bounds[0][i]
                )));
            }
            (start, start + 1, 1)
        } else {
            let start = if bit(o.begin_mask, i) {
                if stride > 0 {
                    0
                } else {
                    dim - 1
                }
            } else {
                clamp(bounds[0][i])
            };
            let end = if bit(o.end_mask, i) {
                if stride > 0 {
                    dim
                } else {
                    -1
                }
            } else {
                clamp(bounds[1][i])
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
        opts.begin.push(start as i64);
        opts.end.push(end as i64);
        opts.strides.push(stride as i64);
        opts.shrink.push(shrink);
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
    Ok(OpKind::StridedSlice(opts))
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
