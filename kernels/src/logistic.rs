//! LOGISTIC (sigmoid), as TFLM's `logistic.cc` runs it: `logistic_s8` through
//! `reference_integer_ops::Logistic` (gemmlowp's fixed-point `logistic` on a Q4.27 input,
//! the multiplier and radius from `CalculateArithmeticOpDataLogistic`), `logistic_f32`
//! through `reference_ops::Logistic<float>`.
//!
//! Bindings, both kernels: 0 `input` (`len` elements: `i8` / `f32`), 1 `output` (`len`
//! elements, same type). Element-wise: `output` may alias `input`.

use hal_core::kernel::KernelError;

use crate::binding_len::{byte_len, require, slice_bytes};
use crate::fixed_point::{logistic, FixedPoint};
use crate::float_math::expf;
use crate::params::{KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, rounding_divide_by_pot};
use crate::softmax::calculate_input_radius;

/// Integer bits of the rescaled input of int8 LOGISTIC and TANH (TFLM's
/// `kInputIntegerBits`).
pub const INPUT_INTEGER_BITS: i32 = 4;

/// The int8 input scaling TFLM's LOGISTIC and TANH Prepare compute (identically):
/// `frexp(input_scale * 2^27)` as a Q31 multiplier (rounded half away from zero, without
/// `QuantizeMultiplier`'s normalisation) and an exponent, and `CalculateInputRadius(4,
/// exponent, 31)`. Returns `(multiplier, shift, radius)`; `None` for a scale that is not
/// positive and finite or below `2^-28` (a negative shift, for which TFLM's radius is
/// undefined). Shifts above 31 (scales of 16 and more) give radius 0, where the kernel
/// never multiplies, and are stored as 31.
pub fn act_input_scaling(input_scale: f32) -> Option<(i32, i32, i32)> {
    if !(input_scale > 0.0 && input_scale.is_finite()) {
        return None;
    }
    let real = f64::from(input_scale) * f64::from(1u32 << (31 - INPUT_INTEGER_BITS));
    let (q, shift) = libm::frexp(real);
    // q has f32's 24-bit mantissa, so q * 2^31 is an integer below 2^31.
    let multiplier = libm::round(q * f64::from(1u32 << 31)) as i32;
    if shift < 0 {
        return None;
    }
    let radius = calculate_input_radius(INPUT_INTEGER_BITS, shift, 31);
    Some((multiplier, shift.min(31), radius))
}

/// The int8 LOGISTIC / TANH parameters' words and their validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActS8 {
    pub(crate) len: usize,
    pub(crate) input_zero_point: i32,
    pub(crate) input_range_radius: i32,
    pub(crate) input_multiplier: i32,
    pub(crate) input_left_shift: i32,
}

impl ActS8 {
    pub(crate) fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
        what: &'static str,
    ) -> Result<Self, KernelError> {
        let (input_multiplier, input_left_shift, input_range_radius) =
            act_input_scaling(input_scale).ok_or(KernelError::Shape(what))?;
        Self {
            len,
            input_zero_point,
            input_range_radius,
            input_multiplier,
            input_left_shift,
        }
        .validate(what)
    }

    pub(crate) fn validate(self, what: &'static str) -> Result<Self, KernelError> {
        byte_len(self.len, 1, what)?;
        let zero_point_ok = (-128..=127).contains(&self.input_zero_point);
        if !zero_point_ok
            || self.input_range_radius < 0
            || self.input_multiplier < 0
            || !(-31..=31).contains(&self.input_left_shift)
        {
            return Err(KernelError::Shape(what));
        }
        Ok(self)
    }

    pub(crate) fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.input_zero_point as u32,
            self.input_range_radius as u32,
            self.input_multiplier as u32,
            self.input_left_shift as u32,
        ]);
    }

    pub(crate) fn decode(words: &mut Words<'_>, what: &'static str) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            input_zero_point: words.i32()?,
            input_range_radius: words.i32()?,
            input_multiplier: words.i32()?,
            input_left_shift: words.i32()?,
        }
        .validate(what)
    }

    pub(crate) fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        require(binding_lens, 0, self.len)?;
        require(binding_lens, 1, self.len)
    }

    /// Runs `f` on each input outside the saturation radius, rescaled to Q4.27; `low` and
    /// `high` below and above it.
    pub(crate) fn map(
        &self,
        input: &[i8],
        output: &mut [i8],
        f: impl Fn(i32) -> i8,
    ) -> Result<(), KernelError> {
        self.check(&[slice_bytes(input), slice_bytes(output)])?;
        for (&x, y) in input.iter().zip(output.iter_mut()).take(self.len) {
            // Both in i8's range (validated): no overflow.
            let centered = i32::from(x) - self.input_zero_point;
            *y = if centered <= -self.input_range_radius {
                i8::MIN
            } else if centered >= self.input_range_radius {
                i8::MAX
            } else {
                f(multiply_by_quantized_multiplier(
                    centered,
                    self.input_multiplier,
                    self.input_left_shift,
                ))
            };
        }
        Ok(())
    }
}

/// `logistic_s8`: int8 sigmoid. The output is in units of 1/256 with zero point -128 (TFLM
/// requires the output zero point and assumes that scale).
///
/// Words: `len`, `input_zero_point`, `input_range_radius`, `input_multiplier`,
/// `input_left_shift`. `decode` refuses (with [`KernelError::Shape`]) a zero `len`, an
/// input zero point outside `-128..=127`, a negative radius or multiplier and a shift
/// outside `-31..=31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogisticS8 {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// Centered inputs at or beyond `±radius` saturate to -128 / 127 (TFLM's
    /// `input_range_radius`).
    pub input_range_radius: i32,
    /// `input_scale * 2^27` as a Q31 fraction (TFLM's `input_multiplier`).
    pub input_multiplier: i32,
    /// Its exponent (TFLM's `input_left_shift`, passed to `MultiplyByQuantizedMultiplier`).
    pub input_left_shift: i32,
}

const LOGISTIC_WHAT: &str = "logistic_s8: zero length, zero point outside int8, input scale not in [2^-28, inf), output zero point not -128, or radius/multiplier/shift out of range";

impl LogisticS8 {
    fn act(&self) -> ActS8 {
        ActS8 {
            len: self.len,
            input_zero_point: self.input_zero_point,
            input_range_radius: self.input_range_radius,
            input_multiplier: self.input_multiplier,
            input_left_shift: self.input_left_shift,
        }
    }

    fn from_act(a: ActS8) -> Self {
        Self {
            len: a.len,
            input_zero_point: a.input_zero_point,
            input_range_radius: a.input_range_radius,
            input_multiplier: a.input_multiplier,
            input_left_shift: a.input_left_shift,
        }
    }

    /// The parameters TFLM's `CalculateArithmeticOpDataLogistic` computes for `len`
    /// elements from the input's quantization; refuses an output zero point other than -128
    /// (as TFLM does; it does not check the output scale, and the kernel writes units of
    /// 1/256 whatever it is) and what [`act_input_scaling`] refuses.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
        output_zero_point: i32,
    ) -> Result<Self, KernelError> {
        if output_zero_point != -128 {
            return Err(KernelError::Shape(LOGISTIC_WHAT));
        }
        Ok(Self::from_act(ActS8::prepare(
            len,
            input_scale,
            input_zero_point,
            LOGISTIC_WHAT,
        )?))
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `len` bytes:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.act().check(binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.act().map(input, output, |input_in_q4| {
            let output_in_q0 =
                logistic(FixedPoint::<INPUT_INTEGER_BITS>::from_raw(input_in_q4)).raw();
            // Q0.31 to Q23.8, then the zero point.
            let v = rounding_divide_by_pot(output_in_q0, 31 - 8) - 128;
            v.clamp(-128, 127) as i8
        })
    }
}

impl KernelParams for LogisticS8 {
    const KERNEL: &'static str = "logistic_s8";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.act().encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self::from_act(ActS8::decode(words, LOGISTIC_WHAT)?))
    }
}

/// Above this TFLM's float logistic returns exactly 1.
const CUTOFF_UPPER: f32 = 16.619_047;
/// Below this it returns `expf(x)`.
const CUTOFF_LOWER: f32 = -9.0;

/// `logistic_f32`: float sigmoid as `reference_ops::Logistic<float>`: 1 above
/// 16.619047164916992, `expf(x)` below -9, else `1 / (1 + expf(-x))`.
///
/// Words: `len`. `decode` refuses (with [`KernelError::Shape`]) a zero length or a byte
/// size overflowing `usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogisticF32 {
    /// Elements.
    pub len: usize,
}

impl LogisticF32 {
    const WHAT: &'static str = "logistic_f32: zero or overflowing length";

    /// The parameters for `len` elements.
    pub fn prepare(len: usize) -> Result<Self, KernelError> {
        byte_len(len, 4, Self::WHAT)?;
        Ok(Self { len })
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `4 * len` bytes:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        require(binding_lens, 0, self.len * 4)?;
        require(binding_lens, 1, self.len * 4)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[slice_bytes(input), slice_bytes(output)])?;
        for (&x, y) in input.iter().zip(output.iter_mut()).take(self.len) {
            *y = logistic_f32(x);
        }
        Ok(())
    }
}

/// TFLM's float logistic of one value.
#[inline]
pub fn logistic_f32(x: f32) -> f32 {
    if x > CUTOFF_UPPER {
        1.0
    } else if x < CUTOFF_LOWER {
        expf(x)
    } else {
        1.0 / (1.0 + expf(-x))
    }
}

impl KernelParams for LogisticF32 {
    const KERNEL: &'static str = "logistic_f32";

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.len as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::prepare(words.usize()?)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn prepare_computes_tflm_scaling() {
        // scale 0.1: 0.1f * 2^27 = 13421773.0 * ... = 0.8 * 2^24: shift 24.
        let (m, s, r) = act_input_scaling(0.1).unwrap();
        let (q, e) = libm::frexp(f64::from(0.1f32) * 134_217_728.0);
        assert_eq!((m, s), (libm::round(q * 2147483648.0) as i32, e));
        assert_eq!(s, 24);
        // floor(15 * 2^27 / 2^24) = 120.
        assert_eq!(r, 120);
        // scale 1/16: exactly 2^23, q = 0.5 → multiplier 2^30, shift 24.
        assert_eq!(act_input_scaling(0.0625), Some((1 << 30, 24, 120)));
        // Scale 32: shift 33 → stored as 31, radius 0.
        assert_eq!(act_input_scaling(32.0).map(|t| (t.1, t.2)), Some((31, 0)));
        assert_eq!(act_input_scaling(0.0), None);
        assert_eq!(act_input_scaling(1e-10), None);
        assert_eq!(act_input_scaling(f32::NAN), None);
        assert!(LogisticS8::prepare(4, 0.1, 0, 0).is_err());
        assert!(LogisticS8::prepare(4, 0.1, 200, -128).is_err());
        assert!(LogisticS8::prepare(0, 0.1, 0, -128).is_err());
    }

    #[test]
    fn known_values() {
        let p = LogisticS8::prepare(7, 0.1, 0, -128).unwrap();
        let mut out = [0i8; 7];
        p.run(&[0, 10, -10, 127, -128, 50, -50], &mut out).unwrap();
        // logistic(0) = 0.5 → 128 - 128 = 0; logistic(1) * 256 = 187.16 → 59;
        // logistic(-1) * 256 = 68.84 → -59; logistic(12.7) saturates at 127 (radius
        // 120); logistic(-12.8) at -128; logistic(5) * 256 = 254.29 → 126;
        // logistic(-5) * 256 = 1.71 → -126.
        assert_eq!(out, [0, 59, -59, 127, -128, 126, -126]);
        // The zero point shifts the input.
        let p = LogisticS8::prepare(1, 0.1, -10, -128).unwrap();
        let mut out = [0i8; 1];
        p.run(&[-10], &mut out).unwrap();
        assert_eq!(out, [0]);
    }

    #[test]
    fn matches_float_within_one_step_and_is_monotonic() {
        for (scale, zp) in [(0.1f32, 0), (0.05, -20), (0.25, 7), (0.02, 100), (3.0, 0)] {
            let p = LogisticS8::prepare(256, scale, zp, -128).unwrap();
            let input: Vec<i8> = (-128..=127).collect();
            let mut out = [0i8; 256];
            p.run(&input, &mut out).unwrap();
            for w in out.windows(2) {
                assert!(w[0] <= w[1]);
            }
            for (&x, &y) in input.iter().zip(&out) {
                let real = f64::from(scale) * (f64::from(x) - f64::from(zp));
                let want = (256.0 / (1.0 + libm::exp(-real)) - 128.0).clamp(-128.0, 127.0);
                assert!(
                    (f64::from(y) - want).abs() <= 1.0,
                    "scale {scale} x {x}: {y} vs {want}"
                );
            }
        }
    }

    #[test]
    fn float_logistic() {
        let p = LogisticF32::prepare(6).unwrap();
        let mut out = [0f32; 6];
        p.run(&[0.0, 1.0, -1.0, 20.0, -10.0, 16.619_047], &mut out)
            .unwrap();
        assert_eq!(out[0], 0.5);
        assert!((f64::from(out[1]) - 1.0 / (1.0 + libm::exp(-1.0))).abs() < 1e-7);
        assert!((f64::from(out[2]) - 1.0 / (1.0 + libm::exp(1.0))).abs() < 1e-7);
        assert_eq!(out[3], 1.0);
        // Below -9: exp(x) itself.
        assert_eq!(out[4], expf(-10.0));
        // At the cutoff (not above it) the formula applies.
        assert_eq!(out[5], 1.0 / (1.0 + expf(-16.619_047)));
        // TFLM spells it 16.619047164916992188f: the same f32.
        assert_eq!(CUTOFF_UPPER.to_bits(), 0x4184_f3cf);
    }

    #[test]
    fn round_trip_decode_and_check() {
        let p = LogisticS8::prepare(10, 0.1, -3, -128).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 5);
        assert_eq!(LogisticS8::decode(&mut Words::new(&words)), Ok(p));
        let mut bad = words.clone();
        bad[1] = 300;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words.clone();
        bad[4] = 32;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words.clone();
        bad[2] = (-1i32) as u32;
        assert!(LogisticS8::decode(&mut Words::new(&bad)).is_err());
        assert!(LogisticS8::decode(&mut Words::new(&words[..4])).is_err());
        assert_eq!(p.check(&[10, 10]), Ok(()));
        assert_eq!(
            p.check(&[10, 9]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 9,
                needed: 10
            })
        );
        assert!(p.run(&[0; 9], &mut [0; 10]).is_err());
        let f = LogisticF32::prepare(3).unwrap();
        let mut words = Vec::new();
        f.encode(&mut words);
        assert_eq!(LogisticF32::decode(&mut Words::new(&words)), Ok(f));
        assert!(LogisticF32::decode(&mut Words::new(&[0])).is_err());
        assert_eq!(
            f.check(&[12, 11]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 11,
                needed: 12
            })
        );
        assert_eq!(LogisticS8::KERNEL, "logistic_s8");
        assert_eq!(LogisticF32::KERNEL, "logistic_f32");
    }
}
