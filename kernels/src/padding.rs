//! Host side: TFLite's `SAME`/`VALID` padding, as TFLM's Prepare computes it
//! (`ComputePaddingHeightWidth` in `tensorflow/lite/kernels/padding.h`), and the sliding
//! window that convolution kernels share.

use crate::params::Words;
use crate::shape;
use core::ops::Range;
use hal_core::kernel::KernelError;

/// A padding scheme, as TFLite's schema names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// `SAME` (schema code 0).
    Same,
    /// `VALID` (schema code 1).
    Valid,
}

impl Padding {
    /// The scheme from its schema code.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Same),
            1 => Some(Self::Valid),
            _ => None,
        }
    }
}

/// Padding offsets and the output size they were computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaddingValues {
    /// Rows of padding before the input (top).
    pub height: i32,
    /// Columns of padding before the input (left).
    pub width: i32,
    /// 1 where the total vertical padding is odd (the extra row goes below).
    pub height_offset: i32,
    /// 1 where the total horizontal padding is odd (the extra column goes right).
    pub width_offset: i32,
    /// The output height TFLM computes (0 where the arguments were refused).
    pub out_height: i32,
    /// The output width TFLM computes (0 where the arguments were refused).
    pub out_width: i32,
}

/// TFLM's `ComputeOutSizeChecked`: the output extent of one spatial dimension.
pub fn compute_out_size(
    padding: Padding,
    image_size: i32,
    filter_size: i32,
    stride: i32,
    dilation: i32,
) -> Option<i32> {
    if image_size < 0 || filter_size <= 0 || stride <= 0 || dilation <= 0 {
        return None;
    }
    let effective = (i64::from(filter_size) - 1) * i64::from(dilation) + 1;
    let value = match padding {
        Padding::Same => (i64::from(image_size) + i64::from(stride) - 1) / i64::from(stride),
        Padding::Valid => {
            (i64::from(image_size) + i64::from(stride) - effective) / i64::from(stride)
        }
    };
    if value < 0 {
        return None;
    }
    i32::try_from(value).ok()
}

/// TFLM's `ComputePaddingWithOffsetChecked`: `(padding, offset)` for one dimension.
fn padding_with_offset(
    stride: i32,
    dilation: i32,
    in_size: i32,
    filter_size: i32,
    out_size: i32,
) -> Option<(i32, i32)> {
    if in_size < 0 || filter_size <= 0 || out_size < 0 || stride <= 0 || dilation <= 0 {
        return None;
    }
    let effective = (i64::from(filter_size) - 1) * i64::from(dilation) + 1;
    let total =
        ((i64::from(out_size) - 1) * i64::from(stride) + effective - i64::from(in_size)).max(0);
    let offset = (total % 2) as i32;
    Some((i32::try_from(total / 2).ok()?, offset))
}

/// TFLM's `ComputePaddingHeightWidth`, exactly: the output size per dimension from the
/// padding scheme, then the padding that centres the window on it (the odd row or column
/// after the input). Where TFLM's checked computation fails part-way, the fields it had
/// not reached stay 0, as TFLM leaves them.
#[allow(clippy::too_many_arguments)]
pub fn compute_padding_height_width(
    stride_height: i32,
    stride_width: i32,
    dilation_height: i32,
    dilation_width: i32,
    in_height: i32,
    in_width: i32,
    filter_height: i32,
    filter_width: i32,
    padding: Padding,
) -> PaddingValues {
    let mut v = PaddingValues::default();
    let Some(out_width) = compute_out_size(
        padding,
        in_width,
        filter_width,
        stride_width,
        dilation_width,
    ) else {
        return v;
    };
    v.out_width = out_width;
    let Some(out_height) = compute_out_size(
        padding,
        in_height,
        filter_height,
        stride_height,
        dilation_height,
    ) else {
        return v;
    };
    v.out_height = out_height;
    let Some((h, ho)) = padding_with_offset(
        stride_height,
        dilation_height,
        in_height,
        filter_height,
        out_height,
    ) else {
        return v;
    };
    v.height = h;
    v.height_offset = ho;
    let Some((w, wo)) = padding_with_offset(
        stride_width,
        dilation_width,
        in_width,
        filter_width,
        out_width,
    ) else {
        return v;
    };
    v.width = w;
    v.width_offset = wo;
    v
}

/// A convolution's sliding window: strides, dilations and the padding before the input
/// (TFLM's `padding_values.height/width`; the trailing padding is implied by the output
/// size). Encoded as six words in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Vertical stride, `>= 1`.
    pub stride_height: usize,
    /// Horizontal stride, `>= 1`.
    pub stride_width: usize,
    /// Vertical dilation, `>= 1`.
    pub dilation_height: usize,
    /// Horizontal dilation, `>= 1`.
    pub dilation_width: usize,
    /// Rows of padding above the input, `0..=i32::MAX`.
    pub pad_height: usize,
    /// Columns of padding left of the input, `0..=i32::MAX`.
    pub pad_width: usize,
}

impl Window {
    pub(crate) fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.stride_height as u32,
            self.stride_width as u32,
            self.dilation_height as u32,
            self.dilation_width as u32,
            self.pad_height as u32,
            self.pad_width as u32,
        ]);
    }

    pub(crate) fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            stride_height: shape::dim(w)?,
            stride_width: shape::dim(w)?,
            dilation_height: shape::dim(w)?,
            dilation_width: shape::dim(w)?,
            pad_height: shape::count(w)?,
            pad_width: shape::count(w)?,
        })
    }

    /// Output row `oy`'s first input row (negative in the padding) and the filter rows
    /// `fy` whose input row `first + dilation_height * fy` lies in `0..input_height`: a
    /// range, since the rows increase with `fy`.
    #[cfg_attr(not(any(ember_tuned, test)), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn rows_in_image(
        &self,
        oy: usize,
        input_height: usize,
        filter_height: usize,
    ) -> (isize, Range<usize>) {
        let first = (oy * self.stride_height) as isize - self.pad_height as isize;
        let taps = taps_in_image(first, self.dilation_height, filter_height, input_height);
        (first, taps)
    }

    /// [`rows_in_image`](Self::rows_in_image) across: output column `ox`'s first input
    /// column and the filter columns inside the input's width.
    #[cfg_attr(not(any(ember_tuned, test)), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn cols_in_image(
        &self,
        ox: usize,
        input_width: usize,
        filter_width: usize,
    ) -> (isize, Range<usize>) {
        let first = (ox * self.stride_width) as isize - self.pad_width as isize;
        let taps = taps_in_image(first, self.dilation_width, filter_width, input_width);
        (first, taps)
    }

    /// Refuses windows whose input coordinates leave `i32` for an output of
    /// `out_h × out_w` and a filter of `filter_h × filter_w`.
    pub(crate) fn fits(
        &self,
        out_h: usize,
        out_w: usize,
        filter_h: usize,
        filter_w: usize,
    ) -> Result<(), KernelError> {
        let reach = |out: usize, stride: usize, filter: usize, dil: usize| {
            (out as u64 - 1) * stride as u64 + (filter as u64 - 1) * dil as u64
        };
        if reach(out_h, self.stride_height, filter_h, self.dilation_height) > i32::MAX as u64
            || reach(out_w, self.stride_width, filter_w, self.dilation_width) > i32::MAX as u64
        {
            return Err(KernelError::Shape("window coordinates overflow i32"));
        }
        Ok(())
    }
}

/// The filter positions `f` in `0..filter` whose coordinate `first + dilation * f` lies in
/// `0..input` (`dilation >= 1`).
#[cfg_attr(not(any(ember_tuned, test)), allow(dead_code))]
#[inline(always)]
fn taps_in_image(first: isize, dilation: usize, filter: usize, input: usize) -> Range<usize> {
    let dilation = dilation as isize;
    let ceil_div = |n: isize| ((n + dilation - 1) / dilation).max(0) as usize;
    let start = ceil_div(-first).min(filter);
    let end = ceil_div(input as isize - first).clamp(start, filter);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_in_image_are_those_inside() {
        for first in -9isize..9 {
            for dilation in 1..4 {
                for filter in 0..6 {
                    for input in 0..7 {
                        let inside: alloc::vec::Vec<usize> = (0..filter)
                            .filter(|&f| {
                                (0..input as isize).contains(&(first + (dilation * f) as isize))
                            })
                            .collect();
                        let taps = taps_in_image(first, dilation, filter, input);
                        assert_eq!(
                            taps.collect::<alloc::vec::Vec<_>>(),
                            inside,
                            "{first} {dilation} {filter} {input}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn same_and_valid() {
        // 5 wide, 3 filter, stride 2, SAME: out 3, total pad (3-1)*2+3-5 = 2 → 1, offset 0.
        let v = compute_padding_height_width(2, 2, 1, 1, 5, 5, 3, 3, Padding::Same);
        assert_eq!((v.out_height, v.height, v.height_offset), (3, 1, 0));
        // 4 wide, 3 filter, stride 2, SAME: out 2, total (2-1)*2+3-4 = 1 → 0, offset 1.
        let v = compute_padding_height_width(2, 2, 1, 1, 4, 4, 3, 3, Padding::Same);
        assert_eq!((v.out_width, v.width, v.width_offset), (2, 0, 1));
        // VALID: out (5 + 1 - 3) / 1 = 3, no padding.
        let v = compute_padding_height_width(1, 1, 1, 1, 5, 5, 3, 3, Padding::Valid);
        assert_eq!((v.out_height, v.height), (3, 0));
        // Dilation 2: effective filter 5; SAME on 5: out 5, total 4 → 2.
        let v = compute_padding_height_width(1, 1, 2, 2, 5, 5, 3, 3, Padding::Same);
        assert_eq!((v.out_height, v.height), (5, 2));
        // VALID with a filter larger than the input: refused, everything 0.
        let v = compute_padding_height_width(1, 1, 1, 1, 2, 2, 3, 3, Padding::Valid);
        assert_eq!(v, PaddingValues::default());
        // Height refused (stride 0), width computed.
        let v = compute_padding_height_width(0, 1, 1, 1, 5, 5, 3, 3, Padding::Valid);
        assert_eq!((v.out_width, v.out_height, v.width), (3, 0, 0));
    }
}
