//! Shared pieces of the kernels' parameter decoding and binding checks.

use crate::params::Words;
use core::ops::Range;
use hal_core::kernel::KernelError;

/// The largest dimension or element count a kernel accepts: TFLM indexes with `int`.
pub(crate) const MAX_DIM: usize = i32::MAX as usize;

/// A dimension word: `1..=i32::MAX`.
pub(crate) fn dim(w: &mut Words<'_>) -> Result<usize, KernelError> {
    let v = w.usize()?;
    if v == 0 || v > MAX_DIM {
        return Err(KernelError::Shape("dimension zero or above i32::MAX"));
    }
    Ok(v)
}

/// A word that may be zero but stays within `0..=i32::MAX` (paddings).
pub(crate) fn count(w: &mut Words<'_>) -> Result<usize, KernelError> {
    let v = w.usize()?;
    if v > MAX_DIM {
        return Err(KernelError::Shape("count above i32::MAX"));
    }
    Ok(v)
}

/// The product of `dims`, refusing products above `i32::MAX` (TFLM's flat sizes are `int`).
pub(crate) fn product(dims: &[usize]) -> Result<usize, KernelError> {
    let mut p: usize = 1;
    for &d in dims {
        p = p
            .checked_mul(d)
            .filter(|&p| p <= MAX_DIM)
            .ok_or(KernelError::Shape("element count overflows"))?;
    }
    Ok(p)
}

/// A boolean word: 0 or 1.
pub(crate) fn flag(w: &mut Words<'_>) -> Result<bool, KernelError> {
    match w.u32()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(KernelError::Shape("flag word neither 0 nor 1")),
    }
}

/// An element size word: 1, 2 or 4 bytes.
pub(crate) fn elem_bytes(w: &mut Words<'_>) -> Result<usize, KernelError> {
    match w.u32()? {
        b @ (1 | 2 | 4) => Ok(b as usize),
        _ => Err(KernelError::Shape("element size not 1, 2 or 4 bytes")),
    }
}

/// An int8 clamp range `[min, max]` within `-128..=127`.
pub(crate) fn act_range_s8(w: &mut Words<'_>) -> Result<(i32, i32), KernelError> {
    let min = w.i32()?;
    let max = w.i32()?;
    if min < -128 || max > 127 || min > max {
        return Err(KernelError::Shape("int8 activation range invalid"));
    }
    Ok((min, max))
}

/// A float clamp range: neither NaN, `min <= max`.
pub(crate) fn act_range_f32(w: &mut Words<'_>) -> Result<(f32, f32), KernelError> {
    let min = w.f32()?;
    let max = w.f32()?;
    if min.is_nan() || max.is_nan() || min > max {
        return Err(KernelError::Shape("float activation range invalid"));
    }
    Ok((min, max))
}

/// A multiplier's shift: `-31..=30`, the range `multiply_by_quantized_multiplier` handles.
pub(crate) fn shift(w: &mut Words<'_>) -> Result<i32, KernelError> {
    let s = w.i32()?;
    shift_ok(s)?;
    Ok(s)
}

/// Refuses a shift outside `-31..=30`.
#[inline]
pub(crate) fn shift_ok(s: i32) -> Result<(), KernelError> {
    if (-31..=30).contains(&s) {
        Ok(())
    } else {
        Err(KernelError::Shape("multiplier shift outside -31..=30"))
    }
}

/// Refuses any shift in `shifts` outside `-31..=30` (per-channel shifts are bindings, so
/// they are checked when a kernel runs).
pub(crate) fn shifts_ok(shifts: &[i32]) -> Result<(), KernelError> {
    shifts.iter().try_for_each(|&s| shift_ok(s))
}

/// Binding `index` must hold at least `elems * elem_bytes` bytes.
pub(crate) fn need(
    lens: &[usize],
    index: usize,
    elems: usize,
    elem_bytes: usize,
) -> Result<(), KernelError> {
    let len = *lens.get(index).ok_or(KernelError::MissingBinding {
        index: index as u32,
        bound: lens.len() as u32,
    })?;
    let needed = elems as u64 * elem_bytes as u64;
    if (len as u64) < needed {
        return Err(KernelError::BindingTooSmall {
            index: index as u32,
            len: len as u64,
            needed,
        });
    }
    Ok(())
}

/// TFLM's `ActivationFunctionWithMinMax` on floats: `min(max(x, lo), hi)` with `std::max`
/// and `std::min`'s comparisons (a NaN `x` passes through).
#[inline(always)]
pub(crate) fn clamp_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let t = if x < lo { lo } else { x };
    if hi < t {
        hi
    } else {
        t
    }
}

/// Clamp an `i32` into `[lo, hi]` and narrow it to `i8` (`lo..=hi` within `i8`'s range).
#[inline(always)]
pub(crate) fn clamp_s8(x: i32, lo: i32, hi: i32) -> i8 {
    x.max(lo).min(hi) as i8
}

/// The output binding's length in bytes that a kernel's check sees for `output_elements`
/// given as output `rows` (of `total_rows` rows of `row_len` elements of `elem` bytes):
/// for the whole range, the slice's own length (so a short output is refused as the
/// binding it is); for a tile that holds its rows, the whole output's. A tile outside the
/// output, or too short for its rows, is refused.
pub(crate) fn tile_binding_len(
    rows: &Range<usize>,
    total_rows: usize,
    row_len: usize,
    output_elements: usize,
    elem: usize,
) -> Result<usize, KernelError> {
    if *rows == (0..total_rows) {
        return Ok(output_elements.saturating_mul(elem));
    }
    let holds = rows.start <= rows.end
        && rows.end <= total_rows
        && rows
            .len()
            .checked_mul(row_len)
            .is_some_and(|n| output_elements >= n);
    if !holds {
        return Err(KernelError::Shape("output tile outside the output"));
    }
    total_rows
        .checked_mul(row_len)
        .and_then(|n| n.checked_mul(elem))
        .ok_or(KernelError::Shape("element count overflows"))
}
