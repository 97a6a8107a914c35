//! CONV_2D: TFLM's `reference_integer_ops::ConvPerChannel` (int8) and
//! `reference_ops::Conv` (float), grouped convolution included.
//!
//! Layouts as TFLite: input `[batches, in_h, in_w, in_depth]` (NHWC), filter
//! `[out_depth, filter_h, filter_w, filter_depth]` (OHWI) with
//! `in_depth = groups * filter_depth`, output `[batches, out_h, out_w, out_depth]`. Where
//! `filter_hwio` is set (no groups), the filter is `[filter_h, filter_w, in_depth,
//! out_depth]` (HWIO) instead, the same length.
//!
//! Bindings of `conv2d_s8` ([`Conv2dS8`]):
//! 0. input, `i8`, `batches * in_h * in_w * in_depth`
//! 1. filter, `i8`, `out_depth * filter_h * filter_w * filter_depth`
//! 2. bias, `i32`, `out_depth` (not read, any length, where `has_bias` is false)
//! 3. per-channel multipliers, `i32`, `out_depth` ([`per_channel_multipliers`])
//! 4. per-channel shifts, `i32`, `out_depth`, each in `-31..=30`
//! 5. output, `i8`, `batches * out_h * out_w * out_depth`
//!
//! Bindings of `conv2d_f32` ([`Conv2dF32`]): 0 input, 1 filter, 2 bias (`out_depth`, or
//! unread), 3 output, all `f32`.

use crate::padding::Window;
use crate::params::{KernelParams, Words};
use crate::quant::{dot_s8, narrow_offset, quantize_multiplier, OutputStageS8};
use crate::shape::{self, clamp_f32, need};
use core::ops::Range;
use hal_core::kernel::KernelError;

/// A convolution's shapes and window, shared by both element types. Encoded as 17 words:
/// `batches, input_height, input_width, input_depth, filter_height, filter_width,
/// filter_depth, output_height, output_width, output_depth`, the [`Window`]'s six words,
/// then `has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2dShape {
    /// Batches (`N`).
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels: a multiple of `filter_depth` (the group count is the quotient).
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Filter input channels (the filter's `I`).
    pub filter_depth: usize,
    /// Output height (the output tensor's, as TFLM loops over it).
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Output channels: a multiple of the group count.
    pub output_depth: usize,
    /// Strides, dilations, padding.
    pub window: Window,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl Conv2dShape {
    /// Output rows: one per batch and output row, each `output_width` pixels.
    pub fn rows(&self) -> Result<usize, KernelError> {
        shape::product(&[self.batches, self.output_height])
    }

    /// Elements of one output row.
    pub fn row_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.output_width, self.output_depth])
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.input_depth as u32,
            self.filter_height as u32,
            self.filter_width as u32,
            self.filter_depth as u32,
            self.output_height as u32,
            self.output_width as u32,
            self.output_depth as u32,
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
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            filter_depth: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            output_depth: shape::dim(w)?,
            window: Window::decode(w)?,
            has_bias: shape::flag(w)?,
        };
        if s.input_depth % s.filter_depth != 0 {
            return Err(KernelError::Shape(
                "input depth not a multiple of filter depth",
            ));
        }
        if s.output_depth % (s.input_depth / s.filter_depth) != 0 {
            return Err(KernelError::Shape(
                "output depth not a multiple of the groups",
            ));
        }
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
        shape::product(&[
            self.output_depth,
            self.filter_height,
            self.filter_width,
            self.filter_depth,
        ])
    }

    /// Output elements.
    pub fn output_len(&self) -> Result<usize, KernelError> {
        shape::product(&[
            self.batches,
            self.output_height,
            self.output_width,
            self.output_depth,
        ])
    }

    fn check_common(
        &self,
        lens: &[usize],
        elem: usize,
        out_index: usize,
    ) -> Result<(), KernelError> {
        need(lens, 0, self.input_len()?, elem)?;
        need(lens, 1, self.filter_len()?, elem)?;
        if self.has_bias {
            need(lens, 2, self.output_depth, 4)?;
        }
        need(lens, out_index, self.output_len()?, elem)
    }

    /// Whether every filter tap of every output lies inside the input (no padding is ever
    /// read): then each output channel's products meet the same weights at every output
    /// position, and an input offset can fold into the bias.
    pub fn taps_inside_input(&self) -> bool {
        let w = &self.window;
        let inside = |out: usize, stride: usize, filter: usize, dilation: usize, input: usize| {
            out == 0
                || filter == 0
                || (out - 1)
                    .checked_mul(stride)
                    .and_then(|last| last.checked_add((filter - 1).checked_mul(dilation)?))
                    .is_some_and(|last| last < input)
        };
        w.pad_height == 0
            && w.pad_width == 0
            && inside(
                self.output_height,
                w.stride_height,
                self.filter_height,
                w.dilation_height,
                self.input_height,
            )
            && inside(
                self.output_width,
                w.stride_width,
                self.filter_width,
                w.dilation_width,
                self.input_width,
            )
    }

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

/// The `filter_hwio` word: 0 or 1, and 1 only without groups.
fn hwio_flag(w: &mut Words<'_>, shape: &Conv2dShape) -> Result<bool, KernelError> {
    let hwio = shape::flag(w)?;
    hwio_fits(hwio, shape)?;
    Ok(hwio)
}

/// An HWIO filter only without groups (its loops index the filter by `input_depth`).
fn hwio_fits(hwio: bool, shape: &Conv2dShape) -> Result<(), KernelError> {
    if hwio && shape.filter_depth != shape.input_depth {
        return Err(KernelError::Shape(
            "conv2d: an HWIO filter needs filter_depth == input_depth",
        ));
    }
    Ok(())
}

/// Output channels an HWIO convolution accumulates at once.
const HWIO_BLOCK: usize = 64;

/// `conv2d_s8`: int8 convolution with per-output-channel requantization, as TFLM's
/// `ConvPerChannel` (a per-tensor filter scale is broadcast over the channels at import).
/// Words: [`Conv2dShape`]'s 17, then `input_offset` (`-input_zero_point`),
/// `output_offset` (`output_zero_point`), `act_min`, `act_max`, `filter_hwio` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2dS8 {
    /// Shapes and window.
    pub shape: Conv2dShape,
    /// The filter is laid out `[filter_height, filter_width, filter_depth, output_depth]`
    /// (every output channel of one tap together, transposed at import) rather than
    /// TFLite's `[output_depth, filter_height, filter_width, filter_depth]`; only without
    /// groups (`filter_depth == input_depth`). Each output pixel then accumulates all its
    /// channels at once over contiguous weights, which vectorizes however shallow the
    /// input (a first layer over one channel).
    pub filter_hwio: bool,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp ([`Activation::range_s8`](crate::activation::Activation::range_s8)).
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for Conv2dS8 {
    const KERNEL: &'static str = "conv2d_s8";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.input_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
            u32::from(self.filter_hwio),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = Conv2dShape::decode(w)?;
        let input_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        let filter_hwio = hwio_flag(w, &shape)?;
        Ok(Self {
            shape,
            filter_hwio,
            input_offset,
            output_offset,
            act_min,
            act_max,
        })
    }
}

/// TFLM's per-channel requantization of a convolution (`PopulateConvolutionQuantizationParams`):
/// for each channel `i`, `quantize_multiplier(input_scale * filter_scale[i] / output_scale)`
/// computed in `f64` from the `f32` scales. `filter_scales` holds one scale (per-tensor:
/// broadcast to every channel) or one per channel; `multipliers` and `shifts` are the
/// outputs, one per output channel. Refuses mismatched lengths.
pub fn per_channel_multipliers(
    input_scale: f32,
    filter_scales: &[f32],
    output_scale: f32,
    multipliers: &mut [i32],
    shifts: &mut [i32],
) -> Result<(), KernelError> {
    let n = multipliers.len();
    if shifts.len() != n || !(filter_scales.len() == 1 || filter_scales.len() == n) {
        return Err(KernelError::Shape("per-channel scale count mismatch"));
    }
    for (i, (m, s)) in multipliers.iter_mut().zip(shifts.iter_mut()).enumerate() {
        let scale = if filter_scales.len() == 1 {
            filter_scales[0]
        } else {
            filter_scales[i]
        };
        let effective = f64::from(input_scale) * f64::from(scale) / f64::from(output_scale);
        (*m, *s) = quantize_multiplier(effective);
    }
    Ok(())
}

impl Conv2dS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        hwio_fits(self.filter_hwio, &self.shape)?;
        self.shape.check_common(binding_lens, 1, 5)?;
        need(binding_lens, 3, self.shape.output_depth, 4)?;
        need(binding_lens, 4, self.shape.output_depth, 4)
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

    /// Runs output rows `rows` (of [`rows`](Conv2dShape::rows): one per batch and output row)
    /// into `output`, which holds just those rows; the whole range is [`run`](Self::run).
    /// A tile refuses rows outside the output. On a core with a tuned kernel for the shape
    /// (Armv7E-M's DSP extension: the `dsp` module, OHWI filters) that kernel runs, bit for
    /// bit [`run_rows_portable`](Self::run_rows_portable)'s result.
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
        shape::shifts_ok(&shifts[..self.shape.output_depth])?;
        let (in_off, out_off) = (self.input_offset, self.output_offset);
        let (lo, hi) = (self.act_min, self.act_max);
        let has_bias = self.shape.has_bias;
        let fd = self.shape.filter_depth;
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
            && crate::dsp::conv2d::run_rows(self, input, filter, &requantize, rows.clone(), output)
        {
            return Ok(());
        }
        #[cfg(not(ember_dsp))]
        let _ = tuned;
        let finish = |o: usize, oc: usize, acc: i32| output[o] = requantize.apply(oc, acc);
        let narrow = narrow_offset(in_off);
        if self.filter_hwio {
            match narrow {
                Some(offset) => self.shape.run_hwio(
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
                None => self.shape.run_hwio(
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
            self.shape.run_loops(
                rows.clone(),
                0i32,
                |acc, i, f| *acc = acc.wrapping_add(dot_s8(&input[i..i + fd], &filter[f..f + fd])),
                finish,
            );
        } else {
            self.shape.run_loops(
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
        Ok(())
    }
}

/// `conv2d_f32`: float convolution, as TFLM's `reference_ops::Conv`: the products summed
/// in TFLM's loop order from 0, then the bias, then the clamp. Words: [`Conv2dShape`]'s
/// 17, then `act_min` and `act_max` as `f32` bits, then `filter_hwio` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conv2dF32 {
    /// Shapes and window.
    pub shape: Conv2dShape,
    /// The filter is laid out HWIO, as [`Conv2dS8::filter_hwio`]; each output still sums
    /// its products in TFLM's order.
    pub filter_hwio: bool,
    /// Lower clamp ([`Activation::range_f32`](crate::activation::Activation::range_f32)).
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for Conv2dF32 {
    const KERNEL: &'static str = "conv2d_f32";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.act_min.to_bits(),
            self.act_max.to_bits(),
            u32::from(self.filter_hwio),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = Conv2dShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        let filter_hwio = hwio_flag(w, &shape)?;
        Ok(Self {
            shape,
            filter_hwio,
            act_min,
            act_max,
        })
    }
}

impl Conv2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        hwio_fits(self.filter_hwio, &self.shape)?;
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

    /// Runs output rows `rows` (of [`rows`](Conv2dShape::rows): one per batch and output row)
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
        let fd = self.shape.filter_depth;
        let finish = |o: usize, oc: usize, total: f32| {
            let b = if has_bias { bias[oc] } else { 0.0 };
            output[o] = clamp_f32(total + b, lo, hi);
        };
        if self.filter_hwio {
            let mac = |total: &mut f32, x: f32, w: f32| *total += x * w;
            self.shape
                .run_hwio(rows.clone(), input, filter, 0.0f32, mac, finish);
        } else {
            self.shape.run_loops(
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(input: usize, filter: usize, output: usize, stride: usize, pad: usize) -> Conv2dShape {
        Conv2dShape {
            batches: 1,
            input_height: input,
            input_width: input,
            input_depth: 1,
            filter_height: filter,
            filter_width: filter,
            filter_depth: 1,
            output_height: output,
            output_width: output,
            output_depth: 1,
            window: Window {
                stride_height: stride,
                stride_width: stride,
                dilation_height: 1,
                dilation_width: 1,
                pad_height: pad,
                pad_width: pad,
            },
            has_bias: false,
        }
    }

    #[test]
    fn taps_inside_the_input() {
        // 1×1 and VALID windows never leave the input.
        assert!(shape(8, 1, 8, 1, 0).taps_inside_input());
        assert!(shape(8, 3, 6, 1, 0).taps_inside_input());
        assert!(shape(9, 3, 4, 2, 0).taps_inside_input());
        // Padding, or an output grid whose last window runs past the edge (SAME, stride 2,
        // even input: padding only below and right).
        assert!(!shape(8, 3, 8, 1, 1).taps_inside_input());
        assert!(!shape(8, 3, 4, 2, 0).taps_inside_input());
    }
}
