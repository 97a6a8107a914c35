//! QUANTIZE, as TFLM's `quantize_common.cc` runs it: `quantize_f32_s8` and
//! `quantize_f32_s16` through `reference_ops::AffineQuantize`, and `requantize_s8`,
//! `requantize_u8_s8` and `requantize_s8_u8` (an 8-bit input: a change of scale and zero
//! point) through `reference_ops::Requantize` (those with a 16- or 32-bit side:
//! `requantize_int.rs`).
//!
//! Bindings, every kernel: 0 `input` (`len` elements: `f32` / `i8` / `u8`), 1 `output`
//! (`len` `i8` / `u8` / `i16`). Element-wise; a requantization's output may alias its input.

use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;
use hal_core::kernel::KernelError;

use crate::affine::{Affine, AffineConversion};
use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};

/// C's `static_cast<int32_t>` of an integral `float`, as x86-64 executes it
/// (`cvttss2si`): values outside the `i32` range and NaN become `i32::MIN`. The cast is
/// undefined behaviour in C++ there, and differs on Arm (which saturates, NaN to 0); the
/// TFLM oracle runs on x86-64.
#[inline]
pub fn f32_to_i32_like_x86(x: f32) -> i32 {
    // 2^31 is exactly representable; every f32 below it in magnitude truncates in range.
    if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        x as i32
    } else {
        i32::MIN
    }
}

/// TFLM's `AffineQuantize` of one float before the clamp to the output type:
/// `round(x / scale) + zero_point`, the division in `f32`, `round` half away from zero
/// (`roundf`), the cast to `int32` as TFLM on x86-64 ([`f32_to_i32_like_x86`]) and the
/// addition wrapping (kernels-wgsl's `affine_quantize.wgsl`).
#[inline(always)]
pub fn affine_quantize(x: f32, scale: f32, zero_point: i32) -> i32 {
    f32_to_i32_like_x86(libm::roundf(x / scale)).wrapping_add(zero_point)
}

/// `quantize_f32_s8`: `clamp(round(x / scale) + zero_point, -128, 127)`, the division in
/// `f32`, `round` half away from zero (`roundf`), the cast to `int32` and the addition of
/// the zero point as TFLM on x86-64 ([`f32_to_i32_like_x86`], wrapping). Words and
/// refusals: [`Affine`]'s.
pub type QuantizeF32S8 = Affine<Quantize>;

/// float to int8, as the [`AffineConversion`] of QUANTIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantize;

impl AffineConversion for Quantize {
    const KERNEL: &'static str = "quantize_f32_s8";
    const WHAT: &'static str =
        "quantize_f32_s8: zero or overflowing length, scale not positive and finite, or zero point outside int8";
    type Input = f32;
    type Output = i8;

    #[inline(always)]
    fn convert(x: f32, scale: f32, zero_point: i32) -> i8 {
        affine_quantize(x, scale, zero_point).clamp(-128, 127) as i8
    }
}

/// `quantize_f32_s16`: `clamp(round(x / scale) + zero_point, -32768, 32767)`, otherwise as
/// [`QuantizeF32S8`] (TFLM's `AffineQuantize` into int16). Words and refusals:
/// [`Affine`]'s, zero points in int16's range.
pub type QuantizeF32S16 = Affine<QuantizeS16>;

/// float to int16, as the [`AffineConversion`] of QUANTIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantizeS16;

impl AffineConversion for QuantizeS16 {
    const KERNEL: &'static str = "quantize_f32_s16";
    const WHAT: &'static str =
        "quantize_f32_s16: zero or overflowing length, scale not positive and finite, or zero point outside int16";
    const ZERO_POINTS: (i32, i32) = (-32_768, 32_767);
    type Input = f32;
    type Output = i16;

    #[inline(always)]
    fn convert(x: f32, scale: f32, zero_point: i32) -> i16 {
        affine_quantize(x, scale, zero_point).clamp(-32_768, 32_767) as i16
    }
}

/// A scale TFLM can divide by: positive and finite.
pub(crate) fn positive(scale: f32) -> bool {
    scale > 0.0 && scale.is_finite()
}

/// What sets one 8-bit requantization apart from another: its types and kernel.
pub trait ByteRequantization {
    /// The kernel's name.
    const KERNEL: &'static str;
    /// The refusal's message.
    const WHAT: &'static str;
    /// The input's element type.
    type Input: Copy + Into<i32>;
    /// The output's element type.
    type Output;
    /// The input type's range (its zero points').
    const INPUT_RANGE: (i32, i32);
    /// The output type's range (its zero points' and the clamp's).
    const OUTPUT_RANGE: (i32, i32);
    /// An `i32` within [`OUTPUT_RANGE`](Self::OUTPUT_RANGE) as an output element.
    fn narrow(value: i32) -> Self::Output;
}

/// int8 to int8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S8ToS8;

impl ByteRequantization for S8ToS8 {
    const KERNEL: &'static str = "requantize_s8";
    const WHAT: &'static str = "requantize_s8: zero length, zero points outside int8, scale ratio of 2^31 or more, multiplier/shift out of range, or clamp range empty or outside int8";
    type Input = i8;
    type Output = i8;
    const INPUT_RANGE: (i32, i32) = (-128, 127);
    const OUTPUT_RANGE: (i32, i32) = (-128, 127);

    #[inline(always)]
    fn narrow(value: i32) -> i8 {
        value as i8
    }
}

/// uint8 to int8 (a uint8 model's input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct U8ToS8;

impl ByteRequantization for U8ToS8 {
    const KERNEL: &'static str = "requantize_u8_s8";
    const WHAT: &'static str = "requantize_u8_s8: zero length, zero points outside uint8 / int8, scale ratio of 2^31 or more, multiplier/shift out of range, or clamp range empty or outside int8";
    type Input = u8;
    type Output = i8;
    const INPUT_RANGE: (i32, i32) = (0, 255);
    const OUTPUT_RANGE: (i32, i32) = (-128, 127);

    #[inline(always)]
    fn narrow(value: i32) -> i8 {
        value as i8
    }
}

/// int8 to uint8 (a uint8 model's output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S8ToU8;

impl ByteRequantization for S8ToU8 {
    const KERNEL: &'static str = "requantize_s8_u8";
    const WHAT: &'static str = "requantize_s8_u8: zero length, zero points outside int8 / uint8, scale ratio of 2^31 or more, multiplier/shift out of range, or clamp range empty or outside uint8";
    type Input = i8;
    type Output = u8;
    const INPUT_RANGE: (i32, i32) = (-128, 127);
    const OUTPUT_RANGE: (i32, i32) = (0, 255);

    #[inline(always)]
    fn narrow(value: i32) -> u8 {
        value as u8
    }
}

/// `requantize_s8`: `clamp(MultiplyByQuantizedMultiplier(x - input_zero_point, multiplier,
/// shift) + output_zero_point, act_min, act_max)`: TFLM's QUANTIZE from int8 to int8
/// (`Requantize`, no fast path, clamped to int8), its int8 RELU (`ReluQuantized`, clamped
/// from the output's zero point up) and its int8 RELU6 (`Relu6Quantized`, the raw input
/// clamped to the input's zero point and six: [`RequantizeS8::relu6`]).
pub type RequantizeS8 = Requantize<S8ToS8>;
/// `requantize_u8_s8`: TFLM's QUANTIZE from uint8 to int8 (`Requantize`; its fast path for
/// a zero point 128 apart at one scale gives the same values).
pub type RequantizeU8S8 = Requantize<U8ToS8>;
/// `requantize_s8_u8`: TFLM's QUANTIZE from int8 to uint8.
pub type RequantizeS8U8 = Requantize<S8ToU8>;

/// Parameters of the 8-bit requantization `P`.
///
/// Words: `len`, `input_zero_point`, `output_zero_point`, `multiplier`, `shift`, `act_min`,
/// `act_max`. `decode` refuses (with [`KernelError::Shape`] and `P::WHAT`) a zero length,
/// zero points outside their types, a negative multiplier, a shift outside `-31..=31` and
/// a clamp range that is empty or leaves the output's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requantize<P> {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// `input_scale / output_scale` as a Q31 multiplier (TFLM's
    /// `requantize_output_multiplier`).
    pub multiplier: i32,
    /// Its exponent (TFLM's `requantize_output_shift`).
    pub shift: i32,
    /// The lowest output.
    pub act_min: i32,
    /// The highest output.
    pub act_max: i32,
    pair: PhantomData<P>,
}

impl<P: ByteRequantization> Requantize<P> {
    /// The parameters TFLM's `PrepareQuantizeReference` computes for a QUANTIZE between
    /// 8-bit types of `len` elements: `QuantizeMultiplier(input_scale / output_scale)` in
    /// double, clamped to the output's type. Refuses scales that are not positive and
    /// finite, a ratio of `2^31` or more (its shift would exceed 31, overflowing TFLM's left
    /// shift) and what `decode` refuses.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
        output_scale: f32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        if !positive(input_scale) || !positive(output_scale) {
            return Err(KernelError::Shape(P::WHAT));
        }
        let (multiplier, shift) =
            quantize_multiplier(f64::from(input_scale) / f64::from(output_scale));
        let (act_min, act_max) = P::OUTPUT_RANGE;
        Self::new(
            len,
            (input_zero_point, output_zero_point),
            (multiplier, shift),
            (act_min, act_max),
        )
    }

    /// The parameters from their parts, validated as `decode` validates them.
    fn new(
        len: usize,
        (input_zero_point, output_zero_point): (i32, i32),
        (multiplier, shift): (i32, i32),
        (act_min, act_max): (i32, i32),
    ) -> Result<Self, KernelError> {
        Self {
            len,
            input_zero_point,
            output_zero_point,
            multiplier,
            shift,
            act_min,
            act_max,
            pair: PhantomData,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 1, P::WHAT)?;
        let within =
            |(lowest, highest): (i32, i32), value: i32| (lowest..=highest).contains(&value);
        if !within(P::INPUT_RANGE, self.input_zero_point)
            || !within(P::OUTPUT_RANGE, self.output_zero_point)
            || self.multiplier < 0
            || !(-31..=31).contains(&self.shift)
            || !within(P::OUTPUT_RANGE, self.act_min)
            || !within(P::OUTPUT_RANGE, self.act_max)
            || self.act_min > self.act_max
        {
            return Err(KernelError::Shape(P::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `len` bytes:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<P::Input, P::Output>(self.len, binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[P::Input], output: &mut [P::Output]) -> Result<(), KernelError> {
        map_elementwise(self.len, input, output, |x| {
            let centered = x.into() - self.input_zero_point;
            let scaled = multiply_by_quantized_multiplier(centered, self.multiplier, self.shift);
            P::narrow(
                scaled
                    .wrapping_add(self.output_zero_point)
                    .clamp(self.act_min, self.act_max),
            )
        })
    }
}

impl RequantizeS8 {
    /// The parameters TFLM's RELU Prepare (`CalculateReluOpData`) computes for an int8
    /// RELU of `len` elements: `QuantizeMultiplier(input_scale / output_scale)`, the
    /// division in `f32`, and outputs from the output's zero point up. Refuses what
    /// [`prepare`](Self::prepare) refuses.
    pub fn relu(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
        output_scale: f32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        let ratio = input_scale / output_scale;
        if !positive(input_scale) || !positive(output_scale) || !positive(ratio) {
            return Err(KernelError::Shape(S8ToS8::WHAT));
        }
        Self::new(
            len,
            (input_zero_point, output_zero_point),
            quantize_multiplier(f64::from(ratio)),
            (output_zero_point, 127),
        )
    }

    /// The parameters of TFLM's int8 RELU6 (`Relu6Quantized`) for `len` elements: the raw
    /// input (an identity multiplier, `2^30` with shift 1, both zero points 0) clamped to
    /// `[input_zero_point, six]`, six being `round(6 / input_scale) + input_zero_point`
    /// clamped to int8 (`FloatToQuantizedType`, the division in `f32`). The output's
    /// quantization plays no part, as in TFLM. Refuses an input scale that is not positive
    /// and finite, and a six below the zero point (an empty range).
    pub fn relu6(len: usize, input_scale: f32, input_zero_point: i32) -> Result<Self, KernelError> {
        if !positive(input_scale) {
            return Err(KernelError::Shape(S8ToS8::WHAT));
        }
        let six = (libm::roundf(6.0 / input_scale) + input_zero_point as f32).clamp(-128.0, 127.0);
        Self::new(len, (0, 0), (1 << 30, 1), (input_zero_point, six as i32))
    }
}

impl<P: ByteRequantization> KernelParams for Requantize<P> {
    const KERNEL: &'static str = P::KERNEL;
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.input_zero_point as u32,
            self.output_zero_point as u32,
            self.multiplier as u32,
            self.shift as u32,
            self.act_min as u32,
            self.act_max as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::new(
            words.usize()?,
            (words.i32()?, words.i32()?),
            (words.i32()?, words.i32()?),
            (words.i32()?, words.i32()?),
        )
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn quantize_rounds_half_away_and_clamps() {
        let p = QuantizeF32S8::prepare(9, 0.5, -3).unwrap();
        let mut out = [0i8; 9];
        p.run(
            &[0.0, 0.25, -0.25, 0.75, 1.0, 100.0, -100.0, 0.24, -63.0],
            &mut out,
        )
        .unwrap();
        // 0 → -3; 0.5 → 1 → -2; -0.5 → -1 → -4; 1.5 → 2 → -1; 2 → -1; 200 → 127;
        // -200 → -128; 0.48 → 0 → -3; -126 - 3 = -129 → -128.
        assert_eq!(out, [-3, -2, -4, -1, -1, 127, -128, -3, -128]);
    }

    #[test]
    fn quantize_out_of_range_follows_x86() {
        // round(x / scale) beyond i32 becomes INT_MIN; plus a zero point >= 0 clamps to
        // -128, plus a negative one wraps to near INT_MAX and clamps to 127.
        let p = QuantizeF32S8::prepare(4, 1.0, 0).unwrap();
        let mut out = [0i8; 4];
        p.run(&[3.0e9, f32::INFINITY, f32::NAN, -3.0e9], &mut out)
            .unwrap();
        assert_eq!(out, [-128; 4]);
        let p = QuantizeF32S8::prepare(2, 1.0, -1).unwrap();
        let mut out = [0i8; 2];
        p.run(&[3.0e9, 2.0e9], &mut out).unwrap();
        assert_eq!(out, [127, 127]);
        assert_eq!(f32_to_i32_like_x86(2_147_483_520.0), 2_147_483_520);
        assert_eq!(f32_to_i32_like_x86(-2_147_483_648.0), i32::MIN);
        assert_eq!(f32_to_i32_like_x86(2_147_483_648.0), i32::MIN);
    }

    #[test]
    fn requantize_matches_tflm_arithmetic() {
        // Scale 0.1 → 0.2 halves; zero point -10 → 5.
        let p = RequantizeS8::prepare(6, 0.1, -10, 0.2, 5).unwrap();
        let (m, s) = quantize_multiplier(f64::from(0.1f32) / f64::from(0.2f32));
        assert_eq!((p.multiplier, p.shift), (m, s));
        let mut out = [0i8; 6];
        p.run(&[-10, -9, -8, -11, 127, -128], &mut out).unwrap();
        // (x + 10) / 2, + 5: 5, 6 (0.5 → 1), 6, 5 (-0.5 → 0: the doubling high multiply
        // rounds negative ties toward zero), 68.5 → 69 + 5 = 74, -59 + 5 = -54.
        assert_eq!(out, [5, 6, 6, 5, 74, -54]);
        // Identity.
        let p = RequantizeS8::prepare(256, 0.3, 7, 0.3, 7).unwrap();
        let input: Vec<i8> = (-128..=127).collect();
        let mut out = [0i8; 256];
        p.run(&input, &mut out).unwrap();
        assert_eq!(&out[..], &input[..]);
        // A large ratio saturates.
        let p = RequantizeS8::prepare(2, 1.0, 0, 1.0 / 1000.0, 0).unwrap();
        let mut out = [0i8; 2];
        p.run(&[1, -1], &mut out).unwrap();
        assert_eq!(out, [127, -128]);
        assert!(RequantizeS8::prepare(2, 1.0e10, 0, 1.0, 0).is_err());
        assert!(RequantizeS8::prepare(2, 1.0, 0, 0.0, 0).is_err());
        assert!(RequantizeS8::prepare(2, 1.0, 0, 1.0, 128).is_err());
    }

    #[test]
    fn uint8_requantizes_to_and_from_int8() {
        // One scale, zero points 128 apart: TFLM's fast path, the sign bit flipped.
        let to_int8 = RequantizeU8S8::prepare(256, 0.5, 128, 0.5, 0).unwrap();
        let input: Vec<u8> = (0..=255).collect();
        let mut out = [0i8; 256];
        to_int8.run(&input, &mut out).unwrap();
        assert!(input.iter().zip(out).all(|(&x, y)| (x ^ 0x80) as i8 == y));
        let to_uint8 = RequantizeS8U8::prepare(256, 0.5, 0, 0.5, 128).unwrap();
        let mut back = [0u8; 256];
        to_uint8.run(&out, &mut back).unwrap();
        assert_eq!(&back[..], &input[..]);
        // Another scale: clamped to uint8's range.
        let halve = RequantizeS8U8::prepare(3, 0.1, 0, 0.05, 10).unwrap();
        let mut out = [0u8; 3];
        halve.run(&[-10, 100, 127], &mut out).unwrap();
        assert_eq!(out, [0, 210, 255]);
        assert!(RequantizeU8S8::prepare(1, 1.0, -1, 1.0, 0).is_err());
        assert!(RequantizeS8U8::prepare(1, 1.0, 0, 1.0, -1).is_err());
        assert_eq!(RequantizeU8S8::KERNEL, "requantize_u8_s8");
        assert_eq!(RequantizeS8U8::KERNEL, "requantize_s8_u8");
    }

    #[test]
    fn relu_and_relu6_clamp_as_tflm() {
        // RELU: 0.1 → 0.05 doubles, from the output zero point 4 up.
        let p = RequantizeS8::relu(5, 0.1, -3, 0.05, 4).unwrap();
        let (m, s) = quantize_multiplier(f64::from(0.1f32 / 0.05f32));
        assert_eq!(
            (p.multiplier, p.shift, p.act_min, p.act_max),
            (m, s, 4, 127)
        );
        let mut out = [0i8; 5];
        p.run(&[-3, -10, -2, 40, 127], &mut out).unwrap();
        assert_eq!(out, [4, 4, 6, 90, 127]);
        // RELU6: the raw input between the zero point and round(6 / 0.05) + 2 = 122.
        let p = RequantizeS8::relu6(256, 0.05, 2).unwrap();
        assert_eq!((p.act_min, p.act_max), (2, 122));
        let input: Vec<i8> = (-128..=127).collect();
        let mut out = [0i8; 256];
        p.run(&input, &mut out).unwrap();
        let want: Vec<i8> = input.iter().map(|&x| x.clamp(2, 122)).collect();
        assert_eq!(&out[..], &want[..]);
        // Six beyond int8 clamps to 127; a six below the zero point is an empty range.
        assert_eq!(RequantizeS8::relu6(1, 0.01, 0).unwrap().act_max, 127);
        assert!(RequantizeS8::relu6(1, 0.01, 127).is_ok());
        assert!(RequantizeS8::relu6(1, 1000.0, -128).is_ok());
        assert!(RequantizeS8::relu6(1, f32::NAN, 0).is_err());
        assert!(RequantizeS8::relu(1, 1.0, 0, 0.0, 0).is_err());
    }

    #[test]
    fn quantize_to_int16_clamps_to_int16() {
        let p = QuantizeF32S16::prepare(5, 0.5, 10).unwrap();
        let mut out = [0i16; 5];
        p.run(&[0.25, -0.25, 20_000.0, -20_000.0, f32::NAN], &mut out)
            .unwrap();
        assert_eq!(out, [11, 9, 32_767, -32_768, -32_768]);
        assert!(QuantizeF32S16::prepare(1, 0.5, 32_768).is_err());
        assert_eq!(QuantizeF32S16::KERNEL, "quantize_f32_s16");
    }

    #[test]
    fn round_trips_decode_and_check() {
        let q = QuantizeF32S8::prepare(5, 0.02, 3).unwrap();
        let mut words = Vec::new();
        q.encode(&mut words);
        assert_eq!(QuantizeF32S8::decode(&mut Words::new(&words)), Ok(q));
        assert!(QuantizeF32S8::decode(&mut Words::new(&[5, 0f32.to_bits(), 0])).is_err());
        assert!(QuantizeF32S8::decode(&mut Words::new(&[5, f32::NAN.to_bits(), 0])).is_err());
        assert!(QuantizeF32S8::decode(&mut Words::new(&[5, 1f32.to_bits(), 128])).is_err());
        assert_eq!(
            q.check(&[19, 5]),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 19,
                needed: 20
            })
        );
        assert_eq!(
            q.check(&[20, 4]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 4,
                needed: 5
            })
        );
        let r = RequantizeS8::prepare(5, 0.02, 3, 0.05, -7).unwrap();
        let mut words = Vec::new();
        r.encode(&mut words);
        assert_eq!(RequantizeS8::decode(&mut Words::new(&words)), Ok(r));
        let mut bad = words.clone();
        bad[4] = 32;
        assert!(RequantizeS8::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words.clone();
        bad[3] = (-1i32) as u32;
        assert!(RequantizeS8::decode(&mut Words::new(&bad)).is_err());
        for (act_min, act_max) in [(5, 4), (-129, 0), (0, 128)] {
            let mut bad = words.clone();
            (bad[5], bad[6]) = (act_min as u32, act_max as u32);
            assert!(RequantizeS8::decode(&mut Words::new(&bad)).is_err());
        }
        assert_eq!(
            r.check(&[5]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        assert_eq!(QuantizeF32S8::KERNEL, "quantize_f32_s8");
        assert_eq!(RequantizeS8::KERNEL, "requantize_s8");
    }
}
