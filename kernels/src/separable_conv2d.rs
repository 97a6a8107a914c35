//! A depthwise-separable convolution in one step: an int8 DEPTHWISE_CONV_2D, then a 1×1
//! CONV_2D (stride 1, no padding, no groups) over its int8 result, which nothing else
//! reads. Each output equals what [`DepthwiseConv2dS8`] then [`Conv2dS8`] give, bit for bit:
//! the middle values are the depthwise convolution's int8 outputs, requantized and clamped
//! as it would store them. A GPU runs the pair as one dispatch, with no barrier between the
//! layers and no middle tensor in memory.
//!
//! Layouts: input `[batches, in_h, in_w, in_depth]`; depthwise filter `[1, h, w, middle]`
//! with `middle = in_depth * depth_multiplier`; pointwise filter `[out_depth, middle]` (the
//! 1×1 filter's OHWI); output `[batches, out_h, out_w, out_depth]`.
//!
//! Bindings of `separable_conv2d_s8` ([`SeparableConv2dS8`]):
//! 0. input, `i8`
//! 1. depthwise filter, `i8`, `filter_h * filter_w * middle`
//! 2. pointwise filter, `i8`, `out_depth * middle`
//! 3. the depthwise output stage, `i32`, `3 * middle`: biases (read only where the depthwise
//!    shape's `has_bias`), then multipliers, then shifts (each in `-31..=30`)
//! 4. the pointwise output stage, `i32`, `3 * out_depth`: biases, multipliers, shifts
//! 5. output, `i8`, `batches * out_h * out_w * out_depth`
//!
//! [`Conv2dS8`]: crate::conv2d::Conv2dS8

use crate::depthwise_conv2d::DepthwiseConv2dS8;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::OutputStageS8;
use crate::shape::{self, need};
use core::ops::Range;
use hal_core::kernel::KernelError;

/// Most middle channels (`in_depth * depth_multiplier`): one pixel's middle values live in
/// a buffer of this many bytes, on the stack of a CPU and in a GPU workgroup's memory.
pub const MAX_MIDDLE_DEPTH: usize = 1024;

/// `separable_conv2d_s8`. Words: [`DepthwiseConv2dS8`]'s 20 (its shape and output stage),
/// then the pointwise convolution's `output_depth`, `input_offset` (`-middle_zero_point`),
/// `output_offset` (`output_zero_point`), `act_min`, `act_max`: 25 in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeparableConv2dS8 {
    /// The depthwise convolution: shapes, window and its output stage.
    pub depthwise: DepthwiseConv2dS8,
    /// Output channels of the pointwise convolution.
    pub output_depth: usize,
    /// The pointwise convolution's `-input_zero_point` (the middle tensor's).
    pub input_offset: i32,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

impl KernelParams for SeparableConv2dS8 {
    const KERNEL: &'static str = "separable_conv2d_s8";
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::READ_8,
        BindingUse::READ_8,
        BindingUse::READ_8,
        BindingUse::READ_32,
        BindingUse::READ_32,
        BindingUse::WRITE_8,
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.depthwise.encode(out);
        out.extend([
            self.output_depth as u32,
            self.input_offset as u32,
            self.output_offset as u32,
            self.act_min as u32,
            self.act_max as u32,
        ]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let depthwise = DepthwiseConv2dS8::decode(w)?;
        let output_depth = shape::dim(w)?;
        let input_offset = w.i32()?;
        let output_offset = w.i32()?;
        let (act_min, act_max) = shape::act_range_s8(w)?;
        let p = Self {
            depthwise,
            output_depth,
            input_offset,
            output_offset,
            act_min,
            act_max,
        };
        p.middle_fits()?;
        p.output_len()?;
        shape::product(&[p.output_depth, p.middle_depth()?])?;
        Ok(p)
    }
}

impl SeparableConv2dS8 {
    /// Channels between the two layers: the depthwise convolution's outputs.
    pub fn middle_depth(&self) -> Result<usize, KernelError> {
        self.depthwise.shape.output_depth()
    }

    /// The middle channels, refused above [`MAX_MIDDLE_DEPTH`].
    fn middle_fits(&self) -> Result<usize, KernelError> {
        let middle = self.middle_depth()?;
        if middle > MAX_MIDDLE_DEPTH {
            return Err(KernelError::Shape(
                "separable convolution: more than 1024 middle channels",
            ));
        }
        Ok(middle)
    }

    /// Output rows: one per batch and output row.
    pub fn rows(&self) -> Result<usize, KernelError> {
        self.depthwise.shape.rows()
    }

    /// Elements of one output row.
    pub fn row_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.depthwise.shape.output_width, self.output_depth])
    }

    /// Output elements.
    pub fn output_len(&self) -> Result<usize, KernelError> {
        shape::product(&[self.rows()?, self.row_len()?])
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let s = &self.depthwise.shape;
        let middle = self.middle_fits()?;
        need(binding_lens, 0, s.input_len()?, 1)?;
        need(binding_lens, 1, s.filter_len()?, 1)?;
        need(
            binding_lens,
            2,
            shape::product(&[self.output_depth, middle])?,
            1,
        )?;
        need(binding_lens, 3, shape::product(&[3, middle])?, 4)?;
        need(binding_lens, 4, shape::product(&[3, self.output_depth])?, 4)?;
        need(binding_lens, 5, self.output_len()?, 1)
    }

    /// Runs the convolution.
    pub fn run(
        &self,
        input: &[i8],
        depthwise_filter: &[i8],
        pointwise_filter: &[i8],
        depthwise_stage: &[i32],
        pointwise_stage: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_rows(
            input,
            depthwise_filter,
            pointwise_filter,
            depthwise_stage,
            pointwise_stage,
            0..self.rows()?,
            output,
        )
    }

    /// Runs output rows `rows` (of [`rows`](Self::rows)) into `output`, which holds just
    /// those rows; the whole range is [`run`](Self::run). A tile refuses rows outside the
    /// output.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows(
        &self,
        input: &[i8],
        depthwise_filter: &[i8],
        pointwise_filter: &[i8],
        depthwise_stage: &[i32],
        pointwise_stage: &[i32],
        rows: Range<usize>,
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        let out_len =
            shape::tile_binding_len(&rows, self.rows()?, self.row_len()?, output.len(), 1)?;
        self.check(&[
            input.len(),
            depthwise_filter.len(),
            pointwise_filter.len(),
            depthwise_stage.len() * 4,
            pointwise_stage.len() * 4,
            out_len,
        ])?;
        let middle = self.middle_depth()?;
        let od = self.output_depth;
        let first = stage(&depthwise_stage[..3 * middle], middle, &self.depthwise);
        let second = OutputStageS8 {
            has_bias: true,
            output_offset: self.output_offset,
            act_min: self.act_min,
            act_max: self.act_max,
            ..stage(&pointwise_stage[..3 * od], od, &self.depthwise)
        };
        shape::shifts_ok(first.shifts)?;
        shape::shifts_ok(second.shifts)?;
        let s = &self.depthwise.shape;
        let win = &s.window;
        let (ih, iw, id) = (s.input_height, s.input_width, s.input_depth);
        let (fh, fw, mult) = (s.filter_height, s.filter_width, s.depth_multiplier);
        let in_off = self.depthwise.input_offset;
        let mut values = [0i8; MAX_MIDDLE_DEPTH];
        let values = &mut values[..middle];
        let mut pixels = output.chunks_exact_mut(od);
        for row in rows {
            let (b, oy) = (row / s.output_height, row % s.output_height);
            let y0 = (oy * win.stride_height) as i32 - win.pad_height as i32;
            for ox in 0..s.output_width {
                let x0 = (ox * win.stride_width) as i32 - win.pad_width as i32;
                // The depthwise layer's outputs at this pixel, as it would store them.
                for (c, value) in values.iter_mut().enumerate() {
                    let ic = c / mult;
                    let mut acc = 0i32;
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
                            let i = ((b * ih + y as usize) * iw + x as usize) * id + ic;
                            let x = i32::from(input[i]).wrapping_add(in_off);
                            let w = i32::from(depthwise_filter[(fy * fw + fx) * middle + c]);
                            acc = acc.wrapping_add(w.wrapping_mul(x));
                        }
                    }
                    *value = first.apply(c, acc);
                }
                // The pointwise layer over them.
                let Some(out) = pixels.next() else {
                    return Err(KernelError::Shape("output tile too short"));
                };
                for ((oc, o), weights) in out
                    .iter_mut()
                    .enumerate()
                    .zip(pointwise_filter.chunks_exact(middle))
                {
                    let acc = values.iter().zip(weights).fold(0i32, |acc, (&v, &w)| {
                        let x = i32::from(v).wrapping_add(self.input_offset);
                        acc.wrapping_add(x.wrapping_mul(i32::from(w)))
                    });
                    *o = second.apply(oc, acc);
                }
            }
        }
        Ok(())
    }
}

/// The output stage held in `packed` (`channels` biases, multipliers, shifts), with the
/// depthwise convolution's bias flag, offset and clamp.
fn stage<'a>(packed: &'a [i32], channels: usize, d: &DepthwiseConv2dS8) -> OutputStageS8<'a> {
    let (bias, rest) = packed.split_at(channels);
    let (multipliers, shifts) = rest.split_at(channels);
    OutputStageS8 {
        bias,
        has_bias: d.shape.has_bias,
        multipliers,
        shifts,
        per_channel: true,
        output_offset: d.output_offset,
        act_min: d.act_min,
        act_max: d.act_max,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::conv2d::{Conv2dS8, Conv2dShape};
    use crate::depthwise_conv2d::DepthwiseConv2dShape;
    use crate::padding::Window;
    use std::vec;
    use std::vec::Vec;

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
        fn bytes(&mut self, n: usize) -> Vec<i8> {
            (0..n).map(|_| self.next() as i8).collect()
        }
        fn multipliers(&mut self, n: usize) -> Vec<i32> {
            (0..n)
                .map(|_| (1 << 30) + (self.next() % (1 << 30)) as i32)
                .collect()
        }
        fn shifts(&mut self, n: usize) -> Vec<i32> {
            (0..n).map(|_| -(self.below(12) as i32) - 4).collect()
        }
    }

    /// A random separable convolution and its two layers as separate ops.
    fn case(rng: &mut Rng) -> (SeparableConv2dS8, Vec<Vec<i8>>, Vec<i32>, Vec<i32>) {
        let (ih, iw) = (1 + rng.below(9), 1 + rng.below(9));
        let (fh, fw) = (1 + rng.below(3), 1 + rng.below(3));
        let window = Window {
            stride_height: 1 + rng.below(2),
            stride_width: 1 + rng.below(2),
            dilation_height: 1 + rng.below(2),
            dilation_width: 1,
            pad_height: rng.below(2),
            pad_width: rng.below(2),
        };
        let out = |i: usize, f: usize, s: usize, d: usize, p: usize| {
            (i + 2 * p).saturating_sub(d * (f - 1) + 1) / s + 1
        };
        let shape = DepthwiseConv2dShape {
            batches: 1 + rng.below(2),
            input_height: ih,
            input_width: iw,
            input_depth: 1 + rng.below(9),
            depth_multiplier: 1 + rng.below(3),
            filter_height: fh,
            filter_width: fw,
            output_height: out(
                ih,
                fh,
                window.stride_height,
                window.dilation_height,
                window.pad_height,
            ),
            output_width: out(
                iw,
                fw,
                window.stride_width,
                window.dilation_width,
                window.pad_width,
            ),
            window,
            has_bias: rng.below(2) == 0,
        };
        let p = SeparableConv2dS8 {
            depthwise: DepthwiseConv2dS8 {
                shape,
                input_offset: rng.below(256) as i32 - 127,
                output_offset: rng.below(256) as i32 - 128,
                act_min: -128 + rng.below(20) as i32,
                act_max: 127 - rng.below(20) as i32,
            },
            output_depth: 1 + rng.below(13),
            input_offset: rng.below(256) as i32 - 127,
            output_offset: rng.below(256) as i32 - 128,
            act_min: -128 + rng.below(20) as i32,
            act_max: 127 - rng.below(20) as i32,
        };
        let middle = p.middle_depth().unwrap();
        let od = p.output_depth;
        let data = vec![
            rng.bytes(shape.input_len().unwrap()),
            rng.bytes(shape.filter_len().unwrap()),
            rng.bytes(od * middle),
        ];
        let mut first: Vec<i32> = (0..middle).map(|_| rng.below(4001) as i32 - 2000).collect();
        first.extend(rng.multipliers(middle));
        first.extend(rng.shifts(middle));
        let mut second: Vec<i32> = (0..od).map(|_| rng.below(4001) as i32 - 2000).collect();
        second.extend(rng.multipliers(od));
        second.extend(rng.shifts(od));
        (p, data, first, second)
    }

    #[test]
    fn equals_depthwise_then_pointwise() {
        let mut rng = Rng(0x5eed_5eed);
        let mut seen = [false; 256];
        for _ in 0..400 {
            let (p, data, first, second) = case(&mut rng);
            let s = p.depthwise.shape;
            let (middle, od) = (p.middle_depth().unwrap(), p.output_depth);
            let mut mid = vec![0i8; s.output_len().unwrap()];
            p.depthwise
                .run(
                    &data[0],
                    &data[1],
                    &first[..middle],
                    &first[middle..2 * middle],
                    &first[2 * middle..],
                    &mut mid,
                )
                .unwrap();
            let pointwise = Conv2dS8 {
                shape: Conv2dShape {
                    batches: s.batches,
                    input_height: s.output_height,
                    input_width: s.output_width,
                    input_depth: middle,
                    filter_height: 1,
                    filter_width: 1,
                    filter_depth: middle,
                    output_height: s.output_height,
                    output_width: s.output_width,
                    output_depth: od,
                    window: Window {
                        stride_height: 1,
                        stride_width: 1,
                        dilation_height: 1,
                        dilation_width: 1,
                        pad_height: 0,
                        pad_width: 0,
                    },
                    has_bias: true,
                },
                filter_hwio: false,
                input_offset: p.input_offset,
                output_offset: p.output_offset,
                act_min: p.act_min,
                act_max: p.act_max,
            };
            let mut want = vec![0i8; p.output_len().unwrap()];
            pointwise
                .run(
                    &mid,
                    &data[2],
                    &second[..od],
                    &second[od..2 * od],
                    &second[2 * od..],
                    &mut want,
                )
                .unwrap();
            let mut got = vec![0i8; want.len()];
            p.run(&data[0], &data[1], &data[2], &first, &second, &mut got)
                .unwrap();
            assert_eq!(got, want, "{p:?}");
            for &v in &got {
                seen[v as u8 as usize] = true;
            }
            // Rows in two tiles give the same.
            let rows = p.rows().unwrap();
            let split = rows / 2;
            let row_len = p.row_len().unwrap();
            let mut tiled = vec![0i8; want.len()];
            let (a, b) = tiled.split_at_mut(split * row_len);
            p.run_rows(&data[0], &data[1], &data[2], &first, &second, 0..split, a)
                .unwrap();
            p.run_rows(
                &data[0],
                &data[1],
                &data[2],
                &first,
                &second,
                split..rows,
                b,
            )
            .unwrap();
            assert_eq!(tiled, want);
        }
        // The cases reach most of the range, not just the clamps.
        assert!(seen.iter().filter(|&&s| s).count() > 200);
    }

    #[test]
    fn words_round_trip_and_refuse_bad_ones() {
        let mut rng = Rng(7);
        let (p, data, first, second) = case(&mut rng);
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 25);
        assert_eq!(SeparableConv2dS8::decode(&mut Words::new(&words)), Ok(p));
        // Too many middle channels.
        let mut wide = p;
        wide.depthwise.shape.input_depth = MAX_MIDDLE_DEPTH + 1;
        wide.depthwise.shape.depth_multiplier = 1;
        let mut words = Vec::new();
        wide.encode(&mut words);
        assert!(SeparableConv2dS8::decode(&mut Words::new(&words)).is_err());
        // Built by hand, with bindings long enough for it, it is refused when run, not
        // indexed past its buffer.
        let ws = wide.depthwise.shape;
        let (middle, od) = (wide.middle_depth().unwrap(), wide.output_depth);
        let mut out = vec![0i8; wide.output_len().unwrap()];
        assert_eq!(
            wide.run(
                &vec![0; ws.input_len().unwrap()],
                &vec![0; ws.filter_len().unwrap()],
                &vec![0; od * middle],
                &vec![0; 3 * middle],
                &vec![0; 3 * od],
                &mut out,
            ),
            Err(KernelError::Shape(
                "separable convolution: more than 1024 middle channels"
            ))
        );
        // Missing words, a zero output depth.
        assert!(SeparableConv2dS8::decode(&mut Words::new(&[0; 24])).is_err());
        let mut zero = Vec::new();
        p.encode(&mut zero);
        zero[20] = 0;
        assert!(SeparableConv2dS8::decode(&mut Words::new(&zero)).is_err());
        // Short bindings and a bad shift are refused, not read past.
        let mut out = vec![0i8; p.output_len().unwrap()];
        assert!(p
            .run(&data[0], &data[1], &data[2][1..], &first, &second, &mut out)
            .is_err());
        assert!(p
            .run(&data[0], &data[1], &data[2], &first[1..], &second, &mut out)
            .is_err());
        let mut bad = second.clone();
        let last = bad.len() - 1;
        bad[last] = 31;
        assert!(p
            .run(&data[0], &data[1], &data[2], &first, &bad, &mut out)
            .is_err());
        let short = out.len() - 1;
        assert!(p
            .run(
                &data[0],
                &data[1],
                &data[2],
                &first,
                &second,
                &mut out[..short]
            )
            .is_err());
    }
}
