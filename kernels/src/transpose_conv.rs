//! TRANSPOSE_CONV, as TFLM's `transpose_conv.cc` runs it: `reference_integer_ops::
//! TransposeConv` (int8, per-channel requantization) and `reference_ops::TransposeConv`
//! (float).
//!
//! TFLM scatters: for each input pixel and input channel, for each filter tap, for each
//! output channel, it adds `(x + input_offset) * w` (int8, into an int32 scratch) or `x * w`
//! (float, into the output, zeroed first) to the output element the tap lands on, output
//! `(in_y * stride - pad + filter_y, in_x * stride - pad + filter_x)`, dropping those outside
//! the output; then the bias, the requantization (int8) and the clamp. These kernels gather
//! instead: each output element sums the products that land on it, over the input rows
//! `in_y` (ascending) whose tap `filter_y = out_y + pad - in_y * stride` lies in the filter,
//! then the columns likewise (ascending), then the input channels: exactly the order in
//! which TFLM's scatter adds them to that element, so a float output sums the same values
//! in the same order from 0 and gets the same bits, and an int8 one the same wrapping
//! int32 sum.
//!
//! The padding is TFLM's: `ComputePaddingHeightWidth` with dilation 1 over the *output*'s
//! height and width (as if the output were a convolution's input), the importer's to
//! compute. There is no dilation (TFLM has none for TRANSPOSE_CONV).
//!
//! Layouts as TFLite: input `[batches, in_h, in_w, in_depth]`, filter `[out_depth,
//! filter_h, filter_w, in_depth]` (OHWI), output `[batches, out_h, out_w, out_depth]`.
//!
//! Bindings of `transpose_conv_s8` ([`TransposeConvS8`], as [`WEIGHTED_S8_BINDINGS`]):
//! 0 input `i8`, 1 filter `i8`, 2 bias `i32` (`out_depth`; unread without one),
//! 3 per-channel multipliers `i32`, 4 per-channel shifts `i32` (`out_depth` each, shifts in
//! `-31..=30`), 5 output `i8`. Bindings of `transpose_conv_f32` ([`TransposeConvF32`], as
//! [`WEIGHTED_F32_BINDINGS`]): 0 input, 1 filter, 2 bias (or unread), 3 output, all `f32`.

use crate::params::{BindingUse, KernelParams, Words, WEIGHTED_F32_BINDINGS, WEIGHTED_S8_BINDINGS};
use crate::quant::OutputStageS8;
use crate::shape::{self, clamp_f32, need};
use core::ops::Range;
use hal_core::kernel::KernelError;

/// A transpose convolution's shapes, strides and padding, shared by both element types.
/// Encoded as 14 words: `batches, input_height, input_width, input_depth, filter_height,
/// filter_width, output_height, output_width, output_depth, stride_height, stride_width,
/// pad_height, pad_width, has_bias` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeConvShape {
    /// Batches (`N`), the input's and the output's.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels: the filter's `I`.
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Output height (the output tensor's, as TFLM loops over it).
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Output channels: the filter's `O`.
    pub output_depth: usize,
    /// Rows of output between two input rows' windows.
    pub stride_height: usize,
    /// Columns of output between two input columns' windows.
    pub stride_width: usize,
    /// Rows of the first window above the output (TFLM's `padding_values.height`).
    pub pad_height: usize,
    /// Columns of the first window left of the output.
    pub pad_width: usize,
    /// Whether binding 2 holds a bias.
    pub has_bias: bool,
}

impl TransposeConvShape {
    const WHAT: &'static str =
        "transpose_conv: a zero or overflowing dimension, or padding past i32::MAX";

    /// These shapes, if `decode` would take them: every dimension and stride at least 1,
    /// every element count and `output + pad` along each axis at most `i32::MAX`.
    pub fn validate(self) -> Result<Self, KernelError> {
        let dims = [
            self.batches,
            self.input_height,
            self.input_width,
            self.input_depth,
            self.filter_height,
            self.filter_width,
            self.output_height,
            self.output_width,
            self.output_depth,
            self.stride_height,
            self.stride_width,
        ];
        let within = |v: usize| v <= shape::MAX_DIM;
        let reach = |out: usize, pad: usize| out.checked_add(pad).is_some_and(within);
        if dims.iter().any(|&d| d == 0 || !within(d))
            || !reach(self.output_height, self.pad_height)
            || !reach(self.output_width, self.pad_width)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        self.input_len()?;
        self.filter_len()?;
        self.output_len()?;
        Ok(self)
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
            self.input_depth,
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
            self.output_height as u32,
            self.output_width as u32,
            self.output_depth as u32,
            self.stride_height as u32,
            self.stride_width as u32,
            self.pad_height as u32,
            self.pad_width as u32,
            u32::from(self.has_bias),
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            batches: shape::dim(w)?,
            input_height: shape::dim(w)?,
            input_width: shape::dim(w)?,
            input_depth: shape::dim(w)?,
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            output_depth: shape::dim(w)?,
            stride_height: shape::dim(w)?,
            stride_width: shape::dim(w)?,
            pad_height: shape::count(w)?,
            pad_width: shape::count(w)?,
            has_bias: shape::flag(w)?,
        }
        .validate()
    }

    /// Bindings 0 (input), 1 (filter), 2 (bias, where `has_bias`) and `out_index`
    /// (output), of `elem`-byte activations and weights.
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

    /// The gather over output rows `rows` (checked to lie in the output): for each output
    /// element in order, `tap(acc, input_index, filter_index)` once per input pixel whose
    /// window covers it, rows then columns ascending (TFLM's scatter order), the
    /// `input_depth` channels from those indices on being the caller's inner loop; then
    /// `finish(output_index, out_channel, acc)`, `output_index` counted from the first of
    /// `rows`.
    #[inline(always)]
    fn gather<A: Copy>(
        &self,
        rows: Range<usize>,
        init: A,
        mut tap: impl FnMut(&mut A, usize, usize),
        mut finish: impl FnMut(usize, usize, A),
    ) {
        let (ih, iw, id) = (self.input_height, self.input_width, self.input_depth);
        let (fh, fw) = (self.filter_height, self.filter_width);
        let mut out_index = 0;
        for row in rows {
            let (b, oy) = (row / self.output_height, row % self.output_height);
            let ty = oy + self.pad_height;
            let ys = covering(ty, self.stride_height, fh, ih);
            for ox in 0..self.output_width {
                let tx = ox + self.pad_width;
                let xs = covering(tx, self.stride_width, fw, iw);
                for oc in 0..self.output_depth {
                    let mut acc = init;
                    for iy in ys.clone() {
                        let fy = ty - iy * self.stride_height;
                        let input_row = (b * ih + iy) * iw;
                        let filter_row = (oc * fh + fy) * fw;
                        for ix in xs.clone() {
                            let fx = tx - ix * self.stride_width;
                            tap(&mut acc, (input_row + ix) * id, (filter_row + fx) * id);
                        }
                    }
                    finish(out_index, oc, acc);
                    out_index += 1;
                }
            }
        }
    }
}

/// The input rows (or columns) whose windows cover output row `t - pad` (`t` the output
/// index plus the padding): those `i < input` with `0 <= t - i * stride < filter`, in order.
#[inline(always)]
fn covering(t: usize, stride: usize, filter: usize, input: usize) -> Range<usize> {
    let first = if t >= filter {
        (t - filter + 1).div_ceil(stride)
    } else {
        0
    };
    let end = (t / stride + 1).min(input);
    first..end.max(first)
}

/// `transpose_conv_s8`: int8 transpose convolution with per-output-channel requantization,
/// as TFLM's `reference_integer_ops::TransposeConv` (a per-tensor filter scale is broadcast
/// over the channels at import; the filter's zero point is not read, as TFLM reads none).
/// Words: [`TransposeConvShape`]'s 14, then `input_offset` (`-input_zero_point`),
/// `output_offset` (`output_zero_point`), `act_min`, `act_max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeConvS8 {
    /// Shapes, strides and padding.
    pub shape: TransposeConvShape,
    /// `-input_zero_point`.
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp ([`Activation::range_s8`](crate::activation::Activation::range_s8)).
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for TransposeConvS8 {
    const KERNEL: &'static str = "transpose_conv_s8";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_S8_BINDINGS;

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
        let shape = TransposeConvShape::decode(w)?;
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

impl TransposeConvS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 1, 5)?;
        need(binding_lens, 3, self.shape.output_depth, 4)?;
        need(binding_lens, 4, self.shape.output_depth, 4)
    }

    /// Runs the transpose convolution. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        let rows = 0..self.shape.rows()?;
        self.run_rows(input, filter, bias, multipliers, shifts, rows, output)
    }

    /// Runs output rows `rows` (one per batch and output row) into `output`, which holds
    /// just those rows; the whole range is [`run`](Self::run). A tile refuses rows outside
    /// the output.
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
        let s = &self.shape;
        let out_len = shape::tile_binding_len(&rows, s.rows()?, s.row_len()?, output.len(), 1)?;
        self.check(&[
            input.len(),
            filter.len(),
            bias.len() * 4,
            multipliers.len() * 4,
            shifts.len() * 4,
            out_len,
        ])?;
        shape::shifts_ok(&shifts[..s.output_depth])?;
        let stage = OutputStageS8 {
            bias,
            has_bias: s.has_bias,
            multipliers,
            shifts,
            per_channel: true,
            output_offset: self.output_offset,
            act_min: self.act_min,
            act_max: self.act_max,
        };
        let (depth, offset) = (s.input_depth, self.input_offset);
        s.gather(
            rows,
            0i32,
            |acc, i, f| {
                for (&x, &w) in input[i..i + depth].iter().zip(&filter[f..f + depth]) {
                    let x = i32::from(x).wrapping_add(offset);
                    *acc = acc.wrapping_add(x.wrapping_mul(i32::from(w)));
                }
            },
            |o, oc, acc| output[o] = stage.apply(oc, acc),
        );
        Ok(())
    }
}

/// `transpose_conv_f32`: float transpose convolution, as TFLM's
/// `reference_ops::TransposeConv`: each output's products summed from 0 in TFLM's scatter
/// order, then the bias, then the clamp. Words: [`TransposeConvShape`]'s 14, then `act_min`
/// and `act_max` as `f32` bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransposeConvF32 {
    /// Shapes, strides and padding.
    pub shape: TransposeConvShape,
    /// Lower clamp ([`Activation::range_f32`](crate::activation::Activation::range_f32)).
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
}

impl KernelParams for TransposeConvF32 {
    const KERNEL: &'static str = "transpose_conv_f32";
    const BINDINGS: &'static [BindingUse] = WEIGHTED_F32_BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([self.act_min.to_bits(), self.act_max.to_bits()]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = TransposeConvShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        Ok(Self {
            shape,
            act_min,
            act_max,
        })
    }
}

impl TransposeConvF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check_common(binding_lens, 4, 3)
    }
}

/// [`TransposeConvF32::run_rows`]' loops, over bindings it has checked.
fn run_rows_f32(
    params: &TransposeConvF32,
    input: &[f32],
    filter: &[f32],
    bias: &[f32],
    rows: Range<usize>,
    output: &mut [f32],
) {
    let s = &params.shape;
    let depth = s.input_depth;
    let (lo, hi) = (params.act_min, params.act_max);
    s.gather(
        rows,
        0.0f32,
        |total, i, f| {
            for (&x, &w) in input[i..i + depth].iter().zip(&filter[f..f + depth]) {
                *total += x * w;
            }
        },
        |o, oc, total| {
            let total = if s.has_bias { total + bias[oc] } else { total };
            output[o] = clamp_f32(total, lo, hi);
        },
    );
}

crate::row_tiles::f32_row_tiles!(TransposeConvF32, portable: run_rows_f32);

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::quant::multiply_by_quantized_multiplier;

    /// A small deterministic generator (xorshift), for the random cases.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn range(&mut self, lo: usize, hi: usize) -> usize {
            lo + self.below(hi - lo + 1)
        }
    }

    fn random_shape(rng: &mut Rng) -> TransposeConvShape {
        let (sh, sw) = (rng.range(1, 3), rng.range(1, 3));
        let (fh, fw) = (rng.range(1, 5), rng.range(1, 5));
        let (ih, iw) = (rng.range(1, 5), rng.range(1, 5));
        // TFLite's output sizes, or now and then any.
        let size = |rng: &mut Rng, input: usize, stride: usize, filter: usize| {
            if rng.below(5) == 0 {
                rng.range(1, 12)
            } else {
                (input - 1) * stride + filter + rng.below(stride)
            }
        };
        TransposeConvShape {
            batches: rng.range(1, 2),
            input_height: ih,
            input_width: iw,
            input_depth: rng.range(1, 4),
            filter_height: fh,
            filter_width: fw,
            output_height: size(rng, ih, sh, fh),
            output_width: size(rng, iw, sw, fw),
            output_depth: rng.range(1, 4),
            stride_height: sh,
            stride_width: sw,
            pad_height: rng.below(fh),
            pad_width: rng.below(fw),
            has_bias: rng.below(4) != 0,
        }
        .validate()
        .unwrap()
    }

    /// TFLM's scatter, transcribed: `product(input_index, filter_index)` added into
    /// `acc[output_index]` in TFLM's loop order.
    fn scatter<A: Copy>(
        s: &TransposeConvShape,
        acc: &mut [A],
        product: impl Fn(usize, usize, A) -> A,
    ) {
        for b in 0..s.batches {
            for iy in 0..s.input_height {
                for ix in 0..s.input_width {
                    for ic in 0..s.input_depth {
                        let oy0 = (iy * s.stride_height) as i64 - s.pad_height as i64;
                        let ox0 = (ix * s.stride_width) as i64 - s.pad_width as i64;
                        for fy in 0..s.filter_height {
                            for fx in 0..s.filter_width {
                                for oc in 0..s.output_depth {
                                    let (oy, ox) = (oy0 + fy as i64, ox0 + fx as i64);
                                    if oy < 0
                                        || ox < 0
                                        || oy >= s.output_height as i64
                                        || ox >= s.output_width as i64
                                    {
                                        continue;
                                    }
                                    let i = ((b * s.input_height + iy) * s.input_width + ix)
                                        * s.input_depth
                                        + ic;
                                    let f = ((oc * s.filter_height + fy) * s.filter_width + fx)
                                        * s.input_depth
                                        + ic;
                                    let o = ((b * s.output_height + oy as usize) * s.output_width
                                        + ox as usize)
                                        * s.output_depth
                                        + oc;
                                    acc[o] = product(i, f, acc[o]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn float_gathers_in_tflm_order() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let s = random_shape(&mut rng);
            let mut value = || (rng.next() % 20_001) as f32 / 1000.0 - 10.0;
            let input: Vec<f32> = (0..s.input_len().unwrap()).map(|_| value()).collect();
            let filter: Vec<f32> = (0..s.filter_len().unwrap()).map(|_| value()).collect();
            let bias: Vec<f32> = (0..s.output_depth).map(|_| value()).collect();
            let (act_min, act_max) =
                [(f32::MIN, f32::MAX), (0.0, f32::MAX), (-1.0, 1.0)][rng.below(3)];
            let p = TransposeConvF32 {
                shape: s,
                act_min,
                act_max,
            };
            let mut expected = vec![0.0f32; s.output_len().unwrap()];
            scatter(&s, &mut expected, |i, f, acc| acc + input[i] * filter[f]);
            for (o, e) in expected.iter_mut().enumerate() {
                let total = if s.has_bias {
                    *e + bias[o % s.output_depth]
                } else {
                    *e
                };
                *e = clamp_f32(total, act_min, act_max);
            }
            let mut output = vec![f32::NAN; expected.len()];
            p.run(&input, &filter, &bias, &mut output).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&output), bits(&expected), "{s:?}");
            // In tiles of rows, the same.
            let rows = s.rows().unwrap();
            let row_len = s.row_len().unwrap();
            let cut = rng.below(rows + 1);
            let mut tiled = vec![f32::NAN; expected.len()];
            let (top, bottom) = tiled.split_at_mut(cut * row_len);
            p.run_rows(&input, &filter, &bias, 0..cut, top).unwrap();
            p.run_rows(&input, &filter, &bias, cut..rows, bottom)
                .unwrap();
            assert_eq!(bits(&tiled), bits(&expected), "{s:?}");
        }
    }

    #[test]
    fn int8_matches_tflm_scatter() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let s = random_shape(&mut rng);
            let mut byte = || rng.next() as i8;
            let input: Vec<i8> = (0..s.input_len().unwrap()).map(|_| byte()).collect();
            let filter: Vec<i8> = (0..s.filter_len().unwrap()).map(|_| byte()).collect();
            let od = s.output_depth;
            let bias: Vec<i32> = (0..od).map(|_| rng.below(40_001) as i32 - 20_000).collect();
            let multipliers: Vec<i32> = (0..od)
                .map(|_| (1 << 30) + rng.below(1 << 30) as i32)
                .collect();
            let shifts: Vec<i32> = (0..od).map(|_| rng.below(12) as i32 - 10).collect();
            let p = TransposeConvS8 {
                shape: s,
                input_offset: rng.below(256) as i32 - 127,
                output_offset: rng.below(256) as i32 - 128,
                act_min: -128 + rng.below(60) as i32,
                act_max: 127 - rng.below(60) as i32,
            };
            let mut acc = vec![0i32; s.output_len().unwrap()];
            scatter(&s, &mut acc, |i, f, a| {
                a.wrapping_add((i32::from(input[i]) + p.input_offset) * i32::from(filter[f]))
            });
            let expected: Vec<i8> = acc
                .iter()
                .enumerate()
                .map(|(o, &a)| {
                    let oc = o % od;
                    let a = if s.has_bias {
                        a.wrapping_add(bias[oc])
                    } else {
                        a
                    };
                    let v = multiply_by_quantized_multiplier(a, multipliers[oc], shifts[oc])
                        + p.output_offset;
                    v.clamp(p.act_min, p.act_max) as i8
                })
                .collect();
            let mut output = vec![0i8; expected.len()];
            p.run(&input, &filter, &bias, &multipliers, &shifts, &mut output)
                .unwrap();
            assert_eq!(output, expected, "{s:?}");
        }
    }

    fn small() -> TransposeConvShape {
        TransposeConvShape {
            batches: 1,
            input_height: 2,
            input_width: 2,
            input_depth: 1,
            filter_height: 3,
            filter_width: 3,
            output_height: 4,
            output_width: 4,
            output_depth: 1,
            stride_height: 2,
            stride_width: 2,
            pad_height: 0,
            pad_width: 0,
            has_bias: false,
        }
    }

    #[test]
    fn a_stride_two_window_overlaps() {
        // Each input pixel stamps the 3×3 filter of ones, times its value, every second
        // pixel: the overlaps (row and column 2) add.
        let p = TransposeConvF32 {
            shape: small(),
            act_min: f32::MIN,
            act_max: f32::MAX,
        };
        let mut output = [0.0f32; 16];
        p.run(&[1.0, 2.0, 3.0, 4.0], &[1.0; 9], &[], &mut output)
            .unwrap();
        assert_eq!(
            output,
            [
                1.0, 1.0, 3.0, 2.0, //
                1.0, 1.0, 3.0, 2.0, //
                4.0, 4.0, 10.0, 6.0, //
                3.0, 3.0, 7.0, 4.0,
            ]
        );
    }

    #[test]
    fn words_round_trip_and_bad_words_are_refused() {
        let s = TransposeConvShape {
            has_bias: true,
            pad_height: 1,
            ..small()
        };
        let p = TransposeConvS8 {
            shape: s,
            input_offset: 128,
            output_offset: -3,
            act_min: -128,
            act_max: 100,
        };
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 18);
        assert_eq!(TransposeConvS8::decode(&mut Words::new(&words)), Ok(p));
        let f = TransposeConvF32 {
            shape: s,
            act_min: 0.0,
            act_max: 6.0,
        };
        let mut float_words = Vec::new();
        f.encode(&mut float_words);
        assert_eq!(float_words.len(), 16);
        assert_eq!(
            TransposeConvF32::decode(&mut Words::new(&float_words)),
            Ok(f)
        );
        let refused = |index: usize, value: u32| {
            let mut bad = words.clone();
            bad[index] = value;
            TransposeConvS8::decode(&mut Words::new(&bad)).is_err()
        };
        // A zero dimension or stride, a flag not 0 or 1, padding past i32::MAX, counts that
        // overflow, an activation range out of int8 or upside down.
        for index in 0..11 {
            assert!(refused(index, 0), "word {index}");
        }
        assert!(refused(11, u32::MAX));
        assert!(refused(12, i32::MAX as u32));
        assert!(refused(13, 2));
        assert!(refused(0, 1 << 30));
        assert!(refused(16, 200));
        assert!(refused(17, -129i32 as u32));
        assert!(refused(16, 101));
        assert!(TransposeConvS8::decode(&mut Words::new(&words[..17])).is_err());
        let mut bad = float_words.clone();
        bad[14] = f32::NAN.to_bits();
        assert!(TransposeConvF32::decode(&mut Words::new(&bad)).is_err());
        (bad[14], bad[15]) = (1.0f32.to_bits(), 0.0f32.to_bits());
        assert!(TransposeConvF32::decode(&mut Words::new(&bad)).is_err());
    }

    #[test]
    fn short_bindings_and_tiles_are_refused() {
        let p = TransposeConvS8 {
            shape: TransposeConvShape {
                has_bias: true,
                ..small()
            },
            input_offset: 0,
            output_offset: 0,
            act_min: -128,
            act_max: 127,
        };
        let (input, filter, bias, m, sh) = ([1i8; 4], [1i8; 9], [0i32; 1], [1 << 30; 1], [0; 1]);
        let mut output = [0i8; 16];
        assert!(p.run(&input, &filter, &bias, &m, &sh, &mut output).is_ok());
        assert!(p
            .run(&input[..3], &filter, &bias, &m, &sh, &mut output)
            .is_err());
        assert!(p
            .run(&input, &filter[..8], &bias, &m, &sh, &mut output)
            .is_err());
        assert!(p.run(&input, &filter, &[], &m, &sh, &mut output).is_err());
        assert!(p
            .run(&input, &filter, &bias, &[], &sh, &mut output)
            .is_err());
        assert!(p.run(&input, &filter, &bias, &m, &[], &mut output).is_err());
        assert!(p
            .run(&input, &filter, &bias, &m, &[31], &mut output)
            .is_err());
        assert!(p
            .run(&input, &filter, &bias, &m, &sh, &mut output[..15])
            .is_err());
        let tile = &mut output[..8];
        assert!(p
            .run_rows(&input, &filter, &bias, &m, &sh, 3..5, tile)
            .is_err());
        assert!(p
            .run_rows(&input, &filter, &bias, &m, &sh, 0..3, tile)
            .is_err());
        assert!(p
            .run_rows(&input, &filter, &bias, &m, &sh, 2..4, tile)
            .is_ok());
        let f = TransposeConvF32 {
            shape: small(),
            act_min: f32::MIN,
            act_max: f32::MAX,
        };
        let mut out = [0.0f32; 16];
        assert!(f.run(&[0.0; 4], &[0.0; 9], &[], &mut out).is_ok());
        assert!(f.run(&[0.0; 4], &[0.0; 8], &[], &mut out).is_err());
        assert!(f.run(&[0.0; 4], &[0.0; 9], &[], &mut out[..15]).is_err());
        assert_eq!(f.check(&[16, 36, 0, 64]), Ok(()));
        assert!(f.check(&[16, 36, 0]).is_err());
    }

    #[test]
    fn covering_rows_are_those_whose_tap_is_in_the_filter() {
        for t in 0..20 {
            for stride in 1..4 {
                for filter in 1..6 {
                    for input in 1..6 {
                        let expected: Vec<usize> = (0..input)
                            .filter(|&i| i * stride <= t && t - i * stride < filter)
                            .collect();
                        let got: Vec<usize> = covering(t, stride, filter, input).collect();
                        assert_eq!(got, expected, "t {t} stride {stride} filter {filter}");
                    }
                }
            }
        }
    }
}
