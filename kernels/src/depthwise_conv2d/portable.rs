//! DEPTHWISE_CONV_2D's portable loops: TFLM's loop nest and the loops blocked over
//! channels. The reference every tuned variant equals bit for bit.

use super::spec::{DepthwiseConv2dF32, DepthwiseConv2dS8, DepthwiseConv2dShape};
use crate::quant::{narrow_offset, OutputStageS8};
use crate::shape::clamp_f32;
use core::ops::Range;

/// Output channels a depthwise convolution accumulates at once.
pub(super) const CHANNEL_BLOCK: usize = 64;

impl DepthwiseConv2dShape {
    /// The loops blocked over channels: per output pixel, the output channels of up to
    /// [`CHANNEL_BLOCK`] `/ depth_multiplier` input channels accumulate together, each
    /// in-image tap calling `mac(acc, x, w)` for each input value and the contiguous
    /// weights of its `depth_multiplier` output channels (the filter is
    /// `[1, h, w, channels]`); then `finish(output_index, out_channel, acc)`. Each output
    /// sums its taps in TFLM's order. Needs `depth_multiplier <= CHANNEL_BLOCK`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_channel_blocks<T: Copy, X: Copy, A: Copy>(
        &self,
        rows: Range<usize>,
        input: &[T],
        filter: &[T],
        init: A,
        prepare: impl Fn(T) -> X,
        mac: impl Fn(&mut A, X, T),
        mut finish: impl FnMut(usize, usize, A),
    ) {
        let win = &self.window;
        let (ih, iw, id) = (self.input_height, self.input_width, self.input_depth);
        let (fh, fw, mult) = (self.filter_height, self.filter_width, self.depth_multiplier);
        let od = id * mult;
        let inputs_per_block = (CHANNEL_BLOCK / mult.max(1)).max(1);
        let mut block = [init; CHANNEL_BLOCK];
        let mut out_index = 0;
        for row in rows.clone() {
            let (b, oy) = (row / self.output_height, row % self.output_height);
            let y0 = (oy * win.stride_height) as i32 - win.pad_height as i32;
            for ox in 0..self.output_width {
                let x0 = (ox * win.stride_width) as i32 - win.pad_width as i32;
                for ic0 in (0..id).step_by(inputs_per_block) {
                    let inputs = inputs_per_block.min(id - ic0);
                    let oc0 = ic0 * mult;
                    let acc = &mut block[..(inputs * mult).min(CHANNEL_BLOCK)];
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
                            let i = ((b * ih + y as usize) * iw + x as usize) * id + ic0;
                            let f = (fy * fw + fx) * od + oc0;
                            let xs = &input[i..][..inputs];
                            let ws = &filter[f..][..acc.len()];
                            if mult == 1 {
                                for ((a, &x), &w) in acc.iter_mut().zip(xs).zip(ws) {
                                    mac(a, prepare(x), w);
                                }
                            } else {
                                // Offsets rather than `chunks_exact`, which would divide
                                // by the multiplier at every tap.
                                for (j, &x) in xs.iter().enumerate() {
                                    let x = prepare(x);
                                    let a = &mut acc[j * mult..][..mult];
                                    for (a, &w) in a.iter_mut().zip(&ws[j * mult..][..mult]) {
                                        mac(a, x, w);
                                    }
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

    /// TFLM's loop nest: per output element in order (channels `ic * multiplier + m`
    /// ascending), `tap(acc, input_index, filter_index)` for each in-image filter position
    /// in row-major order, then `finish(output_index, out_channel, acc)`.
    #[inline(always)]
    pub(super) fn run_loops<A: Copy>(
        &self,
        rows: Range<usize>,
        init: A,
        mut tap: impl FnMut(&mut A, usize, usize),
        mut finish: impl FnMut(usize, usize, A),
    ) {
        let win = &self.window;
        let (ih, iw, id) = (self.input_height, self.input_width, self.input_depth);
        let (fh, fw) = (self.filter_height, self.filter_width);
        let mult = self.depth_multiplier;
        let od = id * mult;
        let mut out_index = 0;
        for row in rows.clone() {
            let (b, oy) = (row / self.output_height, row % self.output_height);
            let y0 = (oy * win.stride_height) as i32 - win.pad_height as i32;
            for ox in 0..self.output_width {
                let x0 = (ox * win.stride_width) as i32 - win.pad_width as i32;
                for ic in 0..id {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let mut acc = init;
                        for fy in 0..fh {
                            let y = y0 + (win.dilation_height * fy) as i32;
                            for fx in 0..fw {
                                let x = x0 + (win.dilation_width * fx) as i32;
                                if x >= 0 && x < iw as i32 && y >= 0 && y < ih as i32 {
                                    let i = ((b * ih + y as usize) * iw + x as usize) * id + ic;
                                    let f = (fy * fw + fx) * od + oc;
                                    tap(&mut acc, i, f);
                                }
                            }
                        }
                        finish(out_index, oc, acc);
                        out_index += 1;
                    }
                }
            }
        }
    }
}

/// [`DepthwiseConv2dS8::run_rows`]'s portable loops, over bindings it has checked.
#[inline(always)]
pub(super) fn run_rows_s8(
    params: &DepthwiseConv2dS8,
    input: &[i8],
    filter: &[i8],
    requantize: &OutputStageS8<'_>,
    rows: Range<usize>,
    output: &mut [i8],
) {
    let in_off = params.input_offset;
    let finish = |o: usize, oc: usize, acc: i32| output[o] = requantize.apply(oc, acc);
    let narrow = narrow_offset(in_off);
    match narrow {
        Some(offset) if params.shape.depth_multiplier <= CHANNEL_BLOCK => {
            params.shape.run_channel_blocks(
                rows.clone(),
                input,
                filter,
                0i32,
                |x| i16::from(x) + offset,
                |acc, x, w| *acc = acc.wrapping_add(i32::from(x * i16::from(w))),
                finish,
            );
        }
        _ => params.shape.run_loops(
            rows.clone(),
            0i32,
            |acc, i, f| {
                let x = i32::from(input[i]).wrapping_add(in_off);
                *acc = acc.wrapping_add(i32::from(filter[f]).wrapping_mul(x));
            },
            finish,
        ),
    }
}

/// [`DepthwiseConv2dF32::run_rows`]'s loops, over bindings it has checked.
#[inline(always)]
pub(super) fn run_rows_f32(
    params: &DepthwiseConv2dF32,
    input: &[f32],
    filter: &[f32],
    bias: &[f32],
    rows: Range<usize>,
    output: &mut [f32],
) {
    let has_bias = params.shape.has_bias;
    let (lo, hi) = (params.act_min, params.act_max);
    let finish = |o: usize, oc: usize, total: f32| {
        let b = if has_bias { bias[oc] } else { 0.0 };
        output[o] = clamp_f32(total + b, lo, hi);
    };
    if params.shape.depth_multiplier <= CHANNEL_BLOCK {
        // Each output still sums its products in TFLM's order, from 0.
        let mac = |total: &mut f32, x: f32, w: f32| *total += x * w;
        params
            .shape
            .run_channel_blocks(rows.clone(), input, filter, 0.0f32, |x| x, mac, finish);
    } else {
        params.shape.run_loops(
            rows.clone(),
            0.0f32,
            |total, i, f| *total += input[i] * filter[f],
            finish,
        );
    }
}
