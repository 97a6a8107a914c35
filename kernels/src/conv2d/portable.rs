//! CONV_2D's portable loops: TFLM's loop nest over an OHWI filter (grouped convolution
//! included) and the blocked loops over an HWIO filter. The reference every tuned variant
//! equals bit for bit.

use super::spec::{Conv2dF32, Conv2dS8, Conv2dShape};
use crate::quant::{dot_s8, narrow_offset, OutputStageS8};
use crate::shape::clamp_f32;
use core::ops::Range;

/// Output channels an HWIO convolution accumulates at once.
const HWIO_BLOCK: usize = 64;

impl Conv2dShape {
    /// The loops over an HWIO filter (`[h, w, in, out]`, no groups): per output pixel,
    /// blocks of up to [`HWIO_BLOCK`] output channels accumulate together, each in-image
    /// tap calling `mac(acc, x, w)` for one input value and a contiguous row of weights;
    /// then `finish(output_index, out_channel, acc)`. Each output sums its products in
    /// TFLM's order (taps, then input channels).
    #[inline(always)]
    fn run_hwio<T: Copy, A: Copy>(
        &self,
        rows: Range<usize>,
        input: &[T],
        filter: &[T],
        init: A,
        mac: impl Fn(&mut A, T, T),
        mut finish: impl FnMut(usize, usize, A),
    ) {
        let win = &self.window;
        let (ih, iw, id) = (self.input_height, self.input_width, self.input_depth);
        let (fh, fw, od) = (self.filter_height, self.filter_width, self.output_depth);
        let mut block = [init; HWIO_BLOCK];
        let mut out_index = 0;
        for row in rows.clone() {
            let (b, oy) = (row / self.output_height, row % self.output_height);
            let y0 = (oy * win.stride_height) as i32 - win.pad_height as i32;
            for ox in 0..self.output_width {
                let x0 = (ox * win.stride_width) as i32 - win.pad_width as i32;
                for oc0 in (0..od).step_by(HWIO_BLOCK) {
                    let acc = &mut block[..HWIO_BLOCK.min(od - oc0)];
                    acc.fill(init);
                    for fy in 0..fh {
                        let y = y0 + (win.dilation_height * fy) as i32;
                        if y < 0 || y >= ih as i32 {
                            continue;
                        }
                        for fx in 0..fw {
                            let x = x0 + (win.dilation_width * fx) as i32;
                            if x < 0 || x >= iw as i32 {
                                continue;
                            }
                            let i = ((b * ih + y as usize) * iw + x as usize) * id;
                            let taps = (fy * fw + fx) * id;
                            for (ic, &v) in input[i..i + id].iter().enumerate() {
                                let row = &filter[(taps + ic) * od + oc0..][..acc.len()];
                                for (a, &w) in acc.iter_mut().zip(row) {
                                    mac(a, v, w);
                                }
                            }
                        }
                    }
                    for (k, &a) in acc.iter().enumerate() {
                        finish(out_index + oc0 + k, oc0 + k, a);
                    }
                }
                out_index += od;
            }
        }
    }

    /// TFLM's loop nest: for each output element in order, `tap(acc, input_index,
    /// filter_index)` once per in-image filter position (the `filter_depth` channels from
    /// those indices on are the caller's inner loop), then `finish(output_index,
    /// out_channel, acc)`.
    #[inline(always)]
    fn run_loops<A: Copy>(
        &self,
        rows: Range<usize>,
        init: A,
        mut tap: impl FnMut(&mut A, usize, usize),
        mut finish: impl FnMut(usize, usize, A),
    ) {
        let win = &self.window;
        let (ih, iw, id) = (self.input_height, self.input_width, self.input_depth);
        let (fh, fw, fd) = (self.filter_height, self.filter_width, self.filter_depth);
        let per_group = self.output_depth / (id / fd);
        let mut out_index = 0;
        for row in rows.clone() {
            let (b, oy) = (row / self.output_height, row % self.output_height);
            let y0 = (oy * win.stride_height) as i32 - win.pad_height as i32;
            for ox in 0..self.output_width {
                let x0 = (ox * win.stride_width) as i32 - win.pad_width as i32;
                for oc in 0..self.output_depth {
                    let channel0 = (oc / per_group) * fd;
                    let mut acc = init;
                    for fy in 0..fh {
                        let y = y0 + (win.dilation_height * fy) as i32;
                        if y < 0 || y >= ih as i32 {
                            continue;
                        }
                        let row = (b * ih + y as usize) * iw;
                        for fx in 0..fw {
                            let x = x0 + (win.dilation_width * fx) as i32;
                            if x < 0 || x >= iw as i32 {
                                continue;
                            }
                            let i = (row + x as usize) * id + channel0;
                            let f = ((oc * fh + fy) * fw + fx) * fd;
                            tap(&mut acc, i, f);
                        }
                    }
                    finish(out_index, oc, acc);
                    out_index += 1;
                }
            }
        }
    }
}

/// [`Conv2dS8::run_rows`]'s portable loops, over bindings it has checked.
#[inline(always)]
pub(super) fn run_rows_s8(
    params: &Conv2dS8,
    input: &[i8],
    filter: &[i8],
    requantize: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
) {
    let in_off = params.input_offset;
    let fd = params.shape.filter_depth;
    let finish = |o: usize, oc: usize, acc: i32| output[o] = requantize.apply(oc, acc);
    let narrow = narrow_offset(in_off);
    if params.filter_hwio {
        match narrow {
            Some(offset) => params.shape.run_hwio(
                rows.clone(),
                input,
                filter,
                0i32,
                |acc, x, w| {
                    let product = (i16::from(x) + offset) * i16::from(w);
                    *acc = acc.wrapping_add(i32::from(product));
                },
                finish,
            ),
            None => params.shape.run_hwio(
                rows.clone(),
                input,
                filter,
                0i32,
                |acc, x, w| {
                    let x = i32::from(x).wrapping_add(in_off);
                    *acc = acc.wrapping_add(x.wrapping_mul(i32::from(w)));
                },
                finish,
            ),
        }
    } else if in_off == 0 {
        // The importer folds the input offset into the bias where it can: raw int8
        // products, which vectorize to 16-bit multiply-adds.
        params.shape.run_loops(
            rows.clone(),
            0i32,
            |acc, i, f| *acc = acc.wrapping_add(dot_s8(&input[i..i + fd], &filter[f..f + fd])),
            finish,
        );
    } else {
        params.shape.run_loops(
            rows.clone(),
            0i32,
            |acc, i, f| {
                for (&x, &w) in input[i..i + fd].iter().zip(&filter[f..f + fd]) {
                    let x = i32::from(x).wrapping_add(in_off);
                    *acc = acc.wrapping_add(i32::from(w).wrapping_mul(x));
                }
            },
            finish,
        );
    }
}

/// [`Conv2dF32::run_rows`]'s loops, over bindings it has checked.
#[inline(always)]
pub(super) fn run_rows_f32(
    params: &Conv2dF32,
    input: &[f32],
    filter: &[f32],
    bias: &[f32],
    rows: Range<usize>,
    output: &mut [f32],
) {
    let has_bias = params.shape.has_bias;
    let (lo, hi) = (params.act_min, params.act_max);
    let fd = params.shape.filter_depth;
    let finish = |o: usize, oc: usize, total: f32| {
        let b = if has_bias { bias[oc] } else { 0.0 };
        output[o] = clamp_f32(total + b, lo, hi);
    };
    if params.filter_hwio {
        let mac = |total: &mut f32, x: f32, w: f32| *total += x * w;
        params
            .shape
            .run_hwio(rows.clone(), input, filter, 0.0f32, mac, finish);
    } else {
        params.shape.run_loops(
            rows.clone(),
            0.0f32,
            |total, i, f| {
                for (&x, &w) in input[i..i + fd].iter().zip(&filter[f..f + fd]) {
                    *total += x * w;
                }
            },
            finish,
        );
    }
}
