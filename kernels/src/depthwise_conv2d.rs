//! DEPTHWISE_CONV_2D: TFLM's `reference_integer_ops::DepthwiseConvPerChannel` (int8) and
//! `reference_ops::DepthwiseConv` (float), any depth multiplier.
//!
//! Layouts as TFLite: input `[batches, in_h, in_w, in_depth]`, filter
//! `[1, filter_h, filter_w, out_depth]` with `out_depth = in_depth * depth_multiplier`
//! (output channel `ic * depth_multiplier + m` reads input channel `ic`), output
//! `[batches, out_h, out_w, out_depth]`.
//!
//! Bindings of `depthwise_conv2d_s8` ([`DepthwiseConv2dS8`]):
//! 0. input, `i8`, `batches * in_h * in_w * in_depth`
//! 1. filter, `i8`, `filter_h * filter_w * out_depth`
//! 2. bias, `i32`, `out_depth` (not read, any length, where `has_bias` is false)
//! 3. per-channel multipliers, `i32`, `out_depth`
//!    ([`per_channel_multipliers`](crate::conv2d::per_channel_multipliers))
//! 4. per-channel shifts, `i32`, `out_depth`, each in `-31..=30`
//! 5. output, `i8`, `batches * out_h * out_w * out_depth`
//!
//! Bindings of `depthwise_conv2d_f32` ([`DepthwiseConv2dF32`]): 0 input, 1 filter, 2 bias
//! (`out_depth`, or unread), 3 output, all `f32`.

use crate::padding::Window;
use crate::params::{KernelParams, Words};
use crate::quant::{narrow_offset, OutputStageS8};
use crate::shape::{self, clamp_f32, need};
use core::ops::Range;
use hal_core::kernel::KernelError;

/// A depthwise convolution's shapes and window. Encoded as 15 words: `batches,
/// input_height, input_width, input_depth, depth_multiplier, filter_height, filter_width,
/// output_height, output_width`, the [`Window`]'s six words, then `has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthwiseConv2dShape {
    /// Batches.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels.
    pub input_depth: usize,
    /// Output channels per input channel.
    pub depth_multiplier: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Strides, dilations, padding.
    pub window: Window,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl DepthwiseConv2dShape {
    /// Output rows: one per batch and output row, each `output_width` pixels.
    pub fn rows(&self) -> Result<usize, KernelError> {
        shape::product(&[self.batches, self.output_height])
    }

    /// Elements of one output row.
    pub fn row_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.output_width, self.output_depth()?])
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.input_depth as u32,
            self.depth_multiplier as u32,
            self.filter_height as u32,
            self.filter_width as u32,
            self.output_height as u32,
            self.output_width as u32,
        ]);
        self.window.encode(out);
        out.extend([u32::from(self.has_bias)]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let s = Self {
            batches: shape::dim(w)?,
            input_height: shape::dim(w)?,
            input_width: shape::dim(w)?,
            input_depth: shape::dim(w)?,
            depth_multiplier: shape::dim(w)?,
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            window: Window::decode(w)?,
            has_bias: shape::flag(w)?,
        };
        s.output_depth()?;
        s.input_len()?;
        s.filter_len()?;
        s.output_len()?;
        s.window.fits(
            s.output_height,
            s.output_width,
            s.filter_height,
            s.filter_width,
        )?;
        Ok(s)
    }

    /// `input_depth * depth_multiplier`.
    pub fn output_depth(&self) -> Result<usize, KernelError> {
        shape::product(&[self.input_depth, self.depth_multiplier])
    }

    /// Input elements.
    pub fn input_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.input_height,
            self.input_width,
            self.input_depth,
        ])
    }

    /// Filter elements.
    pub fn filter_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.filter_height, self.filter_width, self.output_depth()?])
    }

    /// Output elements.
    pub fn output_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.output_height,
            self.output_width,
            self.output_depth()?,
        ])
    }

    fn check_common(&self, lens: &[usize], elem: usize, out: usize) -> Result<(), KernelError> {
        need(lens, 0, self.input_len()?, elem)?;
        need(lens, 1, self.filter_len()?, elem)?;
        if self.has_bias {
            need(lens, 2, self.output_depth()?, 4)?;
        }
        need(lens, out, self.output_len()?, elem)
    }

    /// The loops blocked over channels: per output pixel, the output channels of up to
    /// [`CHANNEL_BLOCK`] `/ depth_multiplier` input channels accumulate together, each
    /// in-image tap calling `mac(acc, x, w)` for each input value and the contiguous
    /// weights of its `depth_multiplier` output channels (the filter is
    /// `[1, h, w, channels]`); then `finish(output_index, out_channel, acc)`. Each output
    /// sums its taps in TFLM's order. Needs `depth_multiplier <= CHANNEL_BLOCK`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn run_channel_blocks<T: Copy, X: Copy, A: Copy>(
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
    fn run_loops<A: Copy>(
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

/// `depthwise_conv2d_s8`: int8 depthwise convolution with per-channel requantization, as
/// TFLM's `DepthwiseConvPerChannel`. Words: [`DepthwiseConv2dShape`]'s 15, then
/// `input_offset` (`-input_zero_point`), `output_offset` (`output_zero_point`),
/// `act_min`, `act_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthwiseConv2dS8 {
    /// Shapes and window.
    pub shape: DepthwiseConv2dShape,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for DepthwiseConv2dS8 {
    const KERNEL: &'static str = "depthwise_conv2d_s8";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = DepthwiseConv2dShape::decode(w)?;
        let input_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        Ok(Self {
            shape,
            input_offset,
            output_offset,
            act_min,
            act_max,
        })
    }
}

impl DepthwiseConv2dS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 1, 5)?;
        let od = self.shape.output_depth()?;
        need(binding_lens, 3, od, 4)?;
        need(binding_lens, 4, od, 4)
    }

    /// Runs the convolution. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows(
            input,
            filter,
            bias,
            multipliers,
            shifts,
            0..self.shape.rows()?,
            output,
        )
    }

    /// Runs output rows `rows` (of [`rows`](DepthwiseConv2dShape::rows): one per batch and output row)
    /// into `output`, which holds just those rows; the whole range is [`run`](Self::run).
    /// A tile refuses rows outside the output. On a core with a tuned kernel for the shape
    /// (Armv7E-M's DSP extension: the `dsp` module) that kernel runs, bit for bit
    /// [`run_rows_portable`](Self::run_rows_portable)'s result.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows_with(input, filter, bias, multipliers, shifts, rows, output, true)
    }

    /// [`run_rows`](Self::run_rows) with the portable loops only: the reference tuned
    /// kernels are checked against.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows_portable(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows_with(
            input,
            filter,
            bias,
            multipliers,
            shifts,
            rows,
            output,
            false,
        )
    }

    /// [`run_rows`](Self::run_rows), with the tuned kernel allowed or not.
    #[allow(clippy::too_many_arguments)]
    fn run_rows_with(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
        tuned: bool,
    ) -> Result<(), KernelError> {
        let out_len = shape::tile_binding_len(
            &rows,
            self.shape.rows()?,
            self.shape.row_len()?,
            output.len(),
            1,
        )?;
        self.check(&[
            input.len(),
            filter.len(),
            bias.len() * 4,
            multipliers.len() * 4,
            shifts.len() * 4,
            out_len,
        ])?;
        shape::shifts_ok(&shifts[..self.shape.output_depth()?])?;
        let (in_off, out_off) = (self.input_offset, self.output_offset);
        let (lo, hi) = (self.act_min, self.act_max);
        let has_bias = self.shape.has_bias;
        let requantize = OutputStageS8 {
            bias,
            has_bias,
            multipliers,
            shifts,
            per_channel: true,
            output_offset: out_off,
            act_min: lo,
            act_max: hi,
        };
        #[cfg(ember_dsp)]
        if tuned
            && crate::dsp::depthwise_conv2d::run_rows(
                self,
                input,
                filter,
                &requantize,
                rows.clone(),
                output,
            )
        {
            return Ok(());
        }
        #[cfg(not(ember_dsp))]
        let _ = tuned;
        let finish = |o: usize, oc: usize, acc: i32| output[o] = requantize.apply(oc, acc);
        let narrow = narrow_offset(in_off);
        match narrow {
            Some(offset) if self.shape.depth_multiplier <= CHANNEL_BLOCK => {
                self.shape.run_channel_blocks(
                    rows.clone(),
                    input,
                    filter,
                    0i32,
                    |x| i16::from(x) + offset,
                    |acc, x, w| *acc = acc.wrapping_add(i32::from(x * i16::from(w))),
                    finish,
                );
            }
            _ => self.shape.run_loops(
                rows.clone(),
                0i32,
                |acc, i, f| {
                    let x = i32::from(input[i]).wrapping_add(in_off);
                    *acc = acc.wrapping_add(i32::from(filter[f]).wrapping_mul(x));
                },
                finish,
            ),
        }
        Ok(())
    }
}

/// Output channels a depthwise convolution accumulates at once.
const CHANNEL_BLOCK: usize = 64;

/// `depthwise_conv2d_f32`: float depthwise convolution, as TFLM's
/// `reference_ops::DepthwiseConv`. Words: [`DepthwiseConv2dShape`]'s 15, then `act_min`
/// and `act_max` as `f32` bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthwiseConv2dF32 {
    /// Shapes and window.
    pub shape: DepthwiseConv2dShape,
    /// Lower clamp.
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for DepthwiseConv2dF32 {
    const KERNEL: &'static str = "depthwise_conv2d_f32";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([self.act_min.to_bits(), self.act_max.to_bits()]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = DepthwiseConv2dShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        Ok(Self {
            shape,
            act_min,
            act_max,
        })
    }
}

impl DepthwiseConv2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 4, 3)
    }

    /// Runs the convolution. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[f32],
        filter: &[f32],
        bias: &[f32],
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        self.run_rows(input, filter, bias, 0..self.shape.rows()?, output)
    }

    /// Runs output rows `rows` (of [`rows`](DepthwiseConv2dShape::rows): one per batch and output row)
    /// into `output`, which holds just those rows; the whole range is [`run`](Self::run).
    /// A tile refuses rows outside the output.
    pub fn run_rows(
        &self,
        input: &[f32],
        filter: &[f32],
        bias: &[f32],
        rows: Range<usize>,
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        let out_len = shape::tile_binding_len(
            &rows,
            self.shape.rows()?,
            self.shape.row_len()?,
            output.len(),
            4,
        )?;
        self.check(&[input.len() * 4, filter.len() * 4, bias.len() * 4, out_len])?;
        let has_bias = self.shape.has_bias;
        let (lo, hi) = (self.act_min, self.act_max);
        let finish = |o: usize, oc: usize, total: f32| {
            let b = if has_bias { bias[oc] } else { 0.0 };
            output[o] = clamp_f32(total + b, lo, hi);
        };
        if self.shape.depth_multiplier <= CHANNEL_BLOCK {
            // Each output still sums its products in TFLM's order, from 0.
            let mac = |total: &mut f32, x: f32, w: f32| *total += x * w;
            self.shape
                .run_channel_blocks(rows.clone(), input, filter, 0.0f32, |x| x, mac, finish);
        } else {
            self.shape.run_loops(
                rows.clone(),
                0.0f32,
                |total, i, f| *total += input[i] * filter[f],
                finish,
            );
        }
        Ok(())
    }
}
