//! RESIZE_BILINEAR, as TFLM's `resize_bilinear.cc` runs it: every output pixel of an NHWC
//! tensor interpolated between the four input pixels around the point it maps to, with
//! `align_corners` or `half_pixel_centers`. Two kernels over one shape:
//!
//! - `resize_bilinear_s8`: `reference_ops::ResizeBilinearInteger`, in fixed point with 10
//!   fractional bits: each axis's scale `((1 << 10) * in + out / 2) / out` (with aligned
//!   corners, of `in - 1` and `out - 1`), the four products summed in 64 bits and divided
//!   by `1 << 20`, rounding half away from zero (TFLM without `TFLITE_SINGLE_ROUNDING`).
//!   The raw int8 values are interpolated: input and output share their quantization.
//! - `resize_bilinear_f32`: `reference_ops::ResizeBilinear<float>`, in `f32`, each
//!   operation in the reference's order.
//!
//! Bindings, both kernels: 0 input `[batches, input_height, input_width, depth]`, 1 output
//! `[batches, output_height, output_width, depth]` (`i8` or `f32`). The output must not
//! alias the input.

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{flag, need, product};
use hal_core::kernel::KernelError;

/// The largest height or width a resize takes: TFLM's fixed point computes
/// `(1 << 10) * size` and each scaled position in `int32`, which stays exact below it (and
/// so do the float path's sizes as `f32`).
pub const MAX_SIDE: usize = 1 << 20;

/// The shape and options both kernels share. Words: `batches`, `input_height`,
/// `input_width`, `depth`, `output_height`, `output_width`, `align_corners`,
/// `half_pixel_centers` (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeBilinear {
    /// Images.
    pub batches: usize,
    /// The input's height.
    pub input_height: usize,
    /// The input's width.
    pub input_width: usize,
    /// Channels.
    pub depth: usize,
    /// The output's height.
    pub output_height: usize,
    /// The output's width.
    pub output_width: usize,
    /// TFLite's `align_corners`.
    pub align_corners: bool,
    /// TFLite's `half_pixel_centers` (TFLM refuses it with `align_corners`).
    pub half_pixel_centers: bool,
}

/// Where one output index samples along an axis: the two input indices and the weight
/// of each (fixed point for int8, `f32` for float).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample<W> {
    lower: usize,
    upper: usize,
    /// The weight of `lower`.
    lower_weight: W,
    /// The weight of `upper`.
    upper_weight: W,
}

/// TFLM's `ComputeInterpolationValuesInteger` for output index `value`: the scaled
/// position in 1/1024ths and its bounds. Every value stays far inside `i64` (and inside
/// TFLM's `int32` for sides up to [`MAX_SIDE`]); `/` truncates toward zero as C's does.
fn scaled_s8(value: i64, scale_10: i64, half_pixel_centers: bool, input_size: i64) -> [i64; 3] {
    let scaled = if half_pixel_centers {
        value * scale_10 + scale_10 / 2 - (1 << 9)
    } else {
        value * scale_10
    };
    let lower = (scaled / (1 << 10)).max(0);
    let upper = ((scaled + (1 << 10) - 1) / (1 << 10)).min(input_size - 1);
    [scaled, lower, upper]
}

/// TFLM's `ComputeInterpolationValues` for output index `value`: the scaled position and
/// its bounds.
fn scaled_f32(
    value: usize,
    scale: f32,
    half_pixel_centers: bool,
    input_size: usize,
) -> (f32, i64, i64) {
    let value = value as f32;
    let scaled = if half_pixel_centers {
        (value + 0.5) * scale - 0.5
    } else {
        value * scale
    };
    // Positions are far inside `i32` (sides up to `MAX_SIDE`): the casts are C's.
    let lower = (libm::floorf(scaled) as i64).max(0);
    let upper = (libm::ceilf(scaled) as i64).min(input_size as i64 - 1);
    (scaled, lower, upper)
}

impl ResizeBilinear {
    const WHAT: &'static str = "resize_bilinear: a zero dimension, a side above 2^20, an overflowing size, align_corners with half_pixel_centers, or a position past the input";

    /// The int8 path's scale along an axis, in 1/1024ths.
    fn scale_10(&self, input_size: usize, output_size: usize) -> i64 {
        let (input, output) = (input_size as i64, output_size as i64);
        if self.align_corners && output > 1 {
            ((1 << 10) * (input - 1) + (output - 1) / 2) / (output - 1)
        } else {
            ((1 << 10) * input + output / 2) / output
        }
    }

    /// The float path's scale along an axis.
    fn scale_f32(&self, input_size: usize, output_size: usize) -> f32 {
        if self.align_corners && output_size > 1 {
            (input_size - 1) as f32 / (output_size - 1) as f32
        } else {
            input_size as f32 / output_size as f32
        }
    }

    /// Where output index `index` samples along an axis of `input_size` whose scale is
    /// `scale` ([`scale_10`](Self::scale_10)), in the int8 path: the weights in 1/1024ths
    /// (they sum to 1024; with half-pixel centres a position before the first pixel gives
    /// one above 1024 and one below 0 to the same pixel, as TFLM's).
    fn sample_s8(&self, index: usize, scale: i64, input_size: usize) -> Sample<i64> {
        let [scaled, lower, upper] = scaled_s8(
            index as i64,
            scale,
            self.half_pixel_centers,
            input_size as i64,
        );
        let upper_weight = scaled - (1 << 10) * lower;
        Sample {
            // Validation kept `lower` inside the input; the clamp keeps a kernel from
            // reading past it whatever it was given.
            lower: (lower as usize).min(input_size - 1),
            upper: upper as usize,
            lower_weight: (1 << 10) - upper_weight,
            upper_weight,
        }
    }

    /// [`sample_s8`](Self::sample_s8) in the float path (`scale` from
    /// [`scale_f32`](Self::scale_f32)): the weights `1 - (p - lower)` and
    /// `p - lower` as TFLM computes them.
    fn sample_f32(&self, index: usize, scale: f32, input_size: usize) -> Sample<f32> {
        let (scaled, lower, upper) = scaled_f32(index, scale, self.half_pixel_centers, input_size);
        let upper_weight = scaled - lower as f32;
        Sample {
            lower: (lower as usize).min(input_size - 1),
            upper: upper as usize,
            lower_weight: 1.0 - upper_weight,
            upper_weight,
        }
    }

    /// These parameters, if the kernel of the int8 (`integer`) or float path may run them:
    /// no zero dimension, sides up to [`MAX_SIDE`], element counts within `i32`, not both
    /// options, and every output position's lower input index inside the input (TFLM
    /// clamps only the upper one: a large upscale whose rounded scale overshoots would read
    /// past the input there).
    fn validate(self, integer: bool) -> Result<Self, KernelError> {
        let sides = [
            self.input_height,
            self.input_width,
            self.output_height,
            self.output_width,
        ];
        let refuse = KernelError::Shape(Self::WHAT);
        if self.batches == 0
            || self.depth == 0
            || sides.iter().any(|&side| side == 0 || side > MAX_SIDE)
            || (self.align_corners && self.half_pixel_centers)
        {
            return Err(refuse);
        }
        product(&[
            self.batches,
            self.input_height,
            self.input_width,
            self.depth,
        ])
        .and_then(|_| {
            product(&[
                self.batches,
                self.output_height,
                self.output_width,
                self.depth,
            ])
        })
        .map_err(|_| refuse)?;
        // The lower index grows with the output index: the last one's bounds them all.
        let inside = |input_size: usize, output_size: usize| {
            let lower = if integer {
                let scale = self.scale_10(input_size, output_size);
                let [_, lower, _] = scaled_s8(
                    output_size as i64 - 1,
                    scale,
                    self.half_pixel_centers,
                    input_size as i64,
                );
                lower
            } else {
                let scale = self.scale_f32(input_size, output_size);
                let (_, lower, _) =
                    scaled_f32(output_size - 1, scale, self.half_pixel_centers, input_size);
                lower
            };
            lower < input_size as i64
        };
        if !inside(self.input_height, self.output_height)
            || !inside(self.input_width, self.output_width)
        {
            return Err(refuse);
        }
        Ok(self)
    }

    /// Bindings 0 and 1 hold the input's and the output's elements of `elem_bytes` bytes.
    fn check_bytes(&self, binding_lens: &[usize], elem_bytes: usize) -> Result<(), KernelError> {
        let pixels = |height: usize, width: usize| self.batches * height * width * self.depth;
        need(
            binding_lens,
            0,
            pixels(self.input_height, self.input_width),
            elem_bytes,
        )?;
        need(
            binding_lens,
            1,
            pixels(self.output_height, self.output_width),
            elem_bytes,
        )
    }

    /// The output elements in order, each from its four input elements
    /// (`[y0x0, y1x0, y0x1, y1x1]`, flat indices) and its samples along height and width
    /// (`sample_y` and `sample_x` of the output row and column).
    fn walk<W: Copy>(
        &self,
        sample_y: impl Fn(usize) -> Sample<W>,
        sample_x: impl Fn(usize) -> Sample<W>,
        mut each: impl FnMut(usize, [usize; 4], Sample<W>, Sample<W>),
    ) {
        let depth = self.depth;
        let mut out = 0;
        for batch in 0..self.batches {
            let image = batch * self.input_height;
            for y in 0..self.output_height {
                let sy = sample_y(y);
                let row0 = (image + sy.lower) * self.input_width;
                let row1 = (image + sy.upper) * self.input_width;
                for x in 0..self.output_width {
                    let sx = sample_x(x);
                    let pixels = [
                        (row0 + sx.lower) * depth,
                        (row1 + sx.lower) * depth,
                        (row0 + sx.upper) * depth,
                        (row1 + sx.upper) * depth,
                    ];
                    for channel in 0..depth {
                        each(out, pixels.map(|p| p + channel), sy, sx);
                        out += 1;
                    }
                }
            }
        }
    }

    fn encode_words(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.batches as u32,
            self.input_height as u32,
            self.input_width as u32,
            self.depth as u32,
            self.output_height as u32,
            self.output_width as u32,
            u32::from(self.align_corners),
            u32::from(self.half_pixel_centers),
        ]);
    }

    fn decode_words(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut next = || words.usize();
        let (batches, input_height, input_width) = (next()?, next()?, next()?);
        let (depth, output_height, output_width) = (next()?, next()?, next()?);
        Ok(Self {
            batches,
            input_height,
            input_width,
            depth,
            output_height,
            output_width,
            align_corners: flag(words)?,
            half_pixel_centers: flag(words)?,
        })
    }
}

/// `resize_bilinear_s8`: TFLM's `ResizeBilinearInteger` on int8. Words: [`ResizeBilinear`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeBilinearS8(pub ResizeBilinear);

impl ResizeBilinearS8 {
    /// These parameters, if `decode` would take them (see [`ResizeBilinear`]).
    pub fn new(shape: ResizeBilinear) -> Result<Self, KernelError> {
        shape.validate(true).map(Self)
    }

    /// Bindings 0 and 1 hold the input's and the output's int8 elements.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check_bytes(binding_lens, 1)
    }

    /// Runs the resize.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        // The fields are public: the shape is re-validated, so that no division or index
        // here can fail.
        let p = &self.0.validate(true)?;
        self.check(&[input.len(), output.len()])?;
        let (height, width) = (p.input_height, p.input_width);
        let scale_y = p.scale_10(height, p.output_height);
        let scale_x = p.scale_10(width, p.output_width);
        p.walk(
            |y| p.sample_s8(y, scale_y, height),
            |x| p.sample_s8(x, scale_x, width),
            |out, [y0x0, y1x0, y0x1, y1x1], sy, sx| {
                let value = |at: usize| i64::from(input[at]);
                let sum = value(y0x0) * sy.lower_weight * sx.lower_weight
                    + value(y1x0) * sy.upper_weight * sx.lower_weight
                    + value(y0x1) * sy.lower_weight * sx.upper_weight
                    + value(y1x1) * sy.upper_weight * sx.upper_weight;
                let round = if sum > 0 { 1 << 19 } else { -(1 << 19) };
                // The weights sum to 1 << 20: the quotient lies between the int8 inputs.
                output[out] = ((sum + round) / (1 << 20)) as i8;
            },
        );
        Ok(())
    }
}

impl KernelParams for ResizeBilinearS8 {
    const KERNEL: &'static str = "resize_bilinear_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.0.encode_words(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::new(ResizeBilinear::decode_words(words)?)
    }
}

/// `resize_bilinear_f32`: TFLM's `ResizeBilinear<float>`. Words: [`ResizeBilinear`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeBilinearF32(pub ResizeBilinear);

impl ResizeBilinearF32 {
    /// These parameters, if `decode` would take them (see [`ResizeBilinear`]).
    pub fn new(shape: ResizeBilinear) -> Result<Self, KernelError> {
        shape.validate(false).map(Self)
    }

    /// Bindings 0 and 1 hold the input's and the output's floats.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check_bytes(binding_lens, 4)
    }

    /// Runs the resize.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        let p = &self.0.validate(false)?;
        self.check(&[input.len() * 4, output.len() * 4])?;
        let (height, width) = (p.input_height, p.input_width);
        let scale_y = p.scale_f32(height, p.output_height);
        let scale_x = p.scale_f32(width, p.output_width);
        p.walk(
            |y| p.sample_f32(y, scale_y, height),
            |x| p.sample_f32(x, scale_x, width),
            |out, [y0x0, y1x0, y0x1, y1x1], sy, sx| {
                // TFLM's expression, left to right, then its rounding offset (0 for float,
                // which turns a -0 into +0).
                output[out] = input[y0x0] * sy.lower_weight * sx.lower_weight
                    + input[y1x0] * sy.upper_weight * sx.lower_weight
                    + input[y0x1] * sy.lower_weight * sx.upper_weight
                    + input[y1x1] * sy.upper_weight * sx.upper_weight
                    + 0.0;
            },
        );
        Ok(())
    }
}

impl KernelParams for ResizeBilinearF32 {
    const KERNEL: &'static str = "resize_bilinear_f32";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.0.encode_words(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::new(ResizeBilinear::decode_words(words)?)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    fn shape(
        (input_height, input_width): (usize, usize),
        (output_height, output_width): (usize, usize),
        align_corners: bool,
        half_pixel_centers: bool,
    ) -> ResizeBilinear {
        ResizeBilinear {
            batches: 1,
            input_height,
            input_width,
            depth: 1,
            output_height,
            output_width,
            align_corners,
            half_pixel_centers,
        }
    }

    #[test]
    fn int8_as_tflm() {
        // 1×2 → 1×4: scale 512/1024; x = 0, 1, 2, 3 sample 0, 0.5, 1, 1.5 (clamped to the
        // last pixel): 10, (10 + 20) / 2 = 15, 20, 20.
        let p = ResizeBilinearS8::new(shape((1, 2), (1, 4), false, false)).unwrap();
        let mut out = [0i8; 4];
        p.run(&[10, 20], &mut out).unwrap();
        assert_eq!(out, [10, 15, 20, 20]);
        // Halves round away from zero: (-3 + -4) / 2 = -3.5 → -4; (3 + 4) / 2 → 4.
        p.run(&[-3, -4], &mut out).unwrap();
        assert_eq!(out, [-3, -4, -4, -4]);
        p.run(&[3, 4], &mut out).unwrap();
        assert_eq!(out, [3, 4, 4, 4]);
        // Half-pixel centres: positions -0.25, 0.25, 0.75, 1.25 → 10, 12.5 → 13, 17.5 → 18,
        // 20.
        let p = ResizeBilinearS8::new(shape((1, 2), (1, 4), false, true)).unwrap();
        p.run(&[10, 20], &mut out).unwrap();
        assert_eq!(out, [10, 13, 18, 20]);
        // Aligned corners: scale 1/3 (341/1024): 10, 13.33 → 13, 16.66 → 17, 20 (1023/1024
        // of the way: 19.99 → 20).
        let p = ResizeBilinearS8::new(shape((1, 2), (1, 4), true, false)).unwrap();
        p.run(&[10, 20], &mut out).unwrap();
        assert_eq!(out, [10, 13, 17, 20]);
        // Both axes: a 2×2 image doubled.
        let p = ResizeBilinearS8::new(shape((2, 2), (4, 4), false, false)).unwrap();
        let mut out = [0i8; 16];
        p.run(&[0, 40, 80, 120], &mut out).unwrap();
        assert_eq!(
            out,
            [0, 20, 40, 40, 40, 60, 80, 80, 80, 100, 120, 120, 80, 100, 120, 120]
        );
    }

    #[test]
    fn float_as_tflm() {
        let p = ResizeBilinearF32::new(shape((1, 2), (1, 4), false, true)).unwrap();
        let mut out = [0f32; 4];
        p.run(&[1.0, 2.0], &mut out).unwrap();
        // -0.25 extrapolates within one pixel: 1.25 · 1 - 0.25 · 1.
        assert_eq!(out, [1.0, 1.25, 1.75, 2.0]);
        let p = ResizeBilinearF32::new(shape((1, 3), (1, 2), false, false)).unwrap();
        let mut out = [0f32; 2];
        // Downscaling 3 → 2: positions 0 and 1.5.
        p.run(&[1.0, 2.0, 4.0], &mut out).unwrap();
        assert_eq!(out, [1.0, 3.0]);
        // -0 comes out as +0, as TFLM adds its rounding offset.
        p.run(&[-0.0, -0.0, -0.0], &mut out).unwrap();
        assert!(out.iter().all(|v| v.to_bits() == 0));
    }

    #[test]
    fn words_round_trip_and_refusals() {
        let good = ResizeBilinear {
            batches: 2,
            depth: 3,
            ..shape((4, 5), (7, 9), true, false)
        };
        let mut words = Vec::new();
        let s8 = ResizeBilinearS8::new(good).unwrap();
        s8.encode(&mut words);
        assert_eq!(words.len(), 8);
        assert_eq!(ResizeBilinearS8::decode(&mut Words::new(&words)), Ok(s8));
        assert_eq!(
            ResizeBilinearF32::decode(&mut Words::new(&words)),
            Ok(ResizeBilinearF32(good))
        );
        let refused = |change: &dyn Fn(&mut Vec<u32>)| {
            let mut bad = words.clone();
            change(&mut bad);
            ResizeBilinearS8::decode(&mut Words::new(&bad)).is_err()
                && ResizeBilinearF32::decode(&mut Words::new(&bad)).is_err()
        };
        assert!(refused(&|w| w[0] = 0));
        assert!(refused(&|w| w[4] = 0));
        assert!(refused(&|w| w[2] = (MAX_SIDE + 1) as u32));
        assert!(refused(&|w| w[6] = 2));
        assert!(refused(&|w| w[7] = 1)); // both options
        assert!(refused(&|w| w.truncate(7)));
        assert!(refused(&|w| {
            w[0] = 1 << 16;
            w[3] = 1 << 16;
        }));
        // A 3 → 2048 upscale's rounded int8 scale (2 / 1024ths past 1.5) reaches past the
        // input: TFLM would read outside it. The float scale does not.
        let far = shape((1, 3), (1, 2048), false, false);
        assert!(ResizeBilinearS8::new(far).is_err());
        assert!(ResizeBilinearF32::new(far).is_ok());
        // Parameters built without `new` are checked again when run.
        let zero = shape((1, 2), (1, 0), false, false);
        assert!(ResizeBilinearS8(zero).run(&[1, 2], &mut []).is_err());
        assert!(ResizeBilinearF32(zero).run(&[1.0, 2.0], &mut []).is_err());
        // Short bindings.
        let p = ResizeBilinearF32::new(shape((1, 2), (1, 4), false, false)).unwrap();
        assert!(p.run(&[1.0, 2.0], &mut [0.0; 3]).is_err());
        assert!(p.run(&[1.0], &mut [0.0; 4]).is_err());
        assert!(s8.check(&[2 * 4 * 5 * 3, 2 * 7 * 9 * 3 - 1]).is_err());
        assert!(s8.check(&[2 * 4 * 5 * 3, 2 * 7 * 9 * 3]).is_ok());
    }

    /// Every index either path computes lies inside the input, for every small shape.
    #[test]
    fn samples_stay_inside() {
        for input in 1..12 {
            for output in 1..40 {
                for (align, half) in [(false, false), (true, false), (false, true)] {
                    let p = shape((input, 1), (output, 1), align, half);
                    for index in 0..output {
                        let a = p.sample_s8(index, p.scale_10(input, output), input);
                        let b = p.sample_f32(index, p.scale_f32(input, output), input);
                        assert!(a.lower <= a.upper && a.upper < input);
                        assert!(b.lower <= b.upper && b.upper < input);
                        assert_eq!(a.lower_weight + a.upper_weight, 1 << 10);
                    }
                    assert!(p.validate(true).is_ok() && p.validate(false).is_ok());
                }
            }
        }
    }
}
