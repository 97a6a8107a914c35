//! TANH, as TFLM's `tanh.cc` runs it: `tanh_s8` through `reference_integer_ops::Tanh`
//! (gemmlowp's fixed-point `tanh` on a Q4.27 input, the input scaling as for LOGISTIC),
//! `tanh_f32` through `reference_ops::Tanh<float>` (`tanhf`).
//!
//! Bindings, both kernels: 0 `input` (`len` elements: `i8` / `f32`), 1 `output` (`len`
//! elements, same type). Element-wise: `output` may alias `input`.

use hal_core::kernel::KernelError;

use crate::binding_len::{byte_len, require, slice_bytes};
use crate::fixed_point::{tanh, FixedPoint};
use crate::float_math::tanhf;
use crate::logistic::{ActS8, INPUT_INTEGER_BITS};
use crate::params::{KernelParams, Words};
use crate::quant::rounding_divide_by_pot;

/// `tanh_s8`: int8 tanh. The output is in units of 1/128 with zero point 0: TFLM checks
/// neither the output's scale nor its zero point, and writes those units regardless.
///
/// Words: `len`, `input_zero_point`, `input_range_radius`, `input_multiplier`,
/// `input_left_shift`, exactly as [`LogisticS8`](crate::logistic::LogisticS8), with the same
/// refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TanhS8 {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// Centered inputs at or beyond `±radius` saturate to -128 / 127 (TFLM's
    /// `input_range_radius`).
    pub input_range_radius: i32,
    /// `input_scale * 2^27` as a Q31 fraction (TFLM's `input_multiplier`).
    pub input_multiplier: i32,
    /// Its exponent (TFLM's `input_left_shift`).
    pub input_left_shift: i32,
}

const WHAT: &str = "tanh_s8: zero length, zero point outside int8, input scale not in [2^-28, inf), or radius/multiplier/shift out of range";

impl TanhS8 {
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

    /// The parameters TFLM's TANH Prepare computes for `len` elements from the input's
    /// quantization (see [`act_input_scaling`](crate::logistic::act_input_scaling) for
    /// what it refuses). The output quantization plays no part.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
    ) -> Result<Self, KernelError> {
        Ok(Self::from_act(ActS8::prepare(
            len,
            input_scale,
            input_zero_point,
            WHAT,
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
            let output_in_q0 = tanh::<INPUT_INTEGER_BITS, { INPUT_INTEGER_BITS + 1 }>(
                FixedPoint::from_raw(input_in_q4),
            )
            .raw();
            // Q0.31 to Q24.7.
            rounding_divide_by_pot(output_in_q0, 31 - 7).clamp(-128, 127) as i8
        })
    }
}

impl KernelParams for TanhS8 {
    const KERNEL: &'static str = "tanh_s8";

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.act().encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self::from_act(ActS8::decode(words, WHAT)?))
    }
}

/// `tanh_f32`: float tanh, `tanhf` element by element.
///
/// Words: `len`. `decode` refuses (with [`KernelError::Shape`]) a zero length or a byte
/// size overflowing `usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TanhF32 {
    /// Elements.
    pub len: usize,
}

impl TanhF32 {
    const WHAT: &'static str = "tanh_f32: zero or overflowing length";

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
            *y = tanhf(x);
        }
        Ok(())
    }
}

impl KernelParams for TanhF32 {
    const KERNEL: &'static str = "tanh_f32";

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
    fn known_values() {
        let p = TanhS8::prepare(7, 0.1, 0).unwrap();
        let mut out = [0i8; 7];
        p.run(&[0, 10, -10, 127, -128, 5, -50], &mut out).unwrap();
        // tanh(0) = 0; tanh(1) * 128 = 97.48 → 97; tanh(-1) → -97; beyond radius 120:
        // ±saturation; tanh(0.5) * 128 = 59.18 → 59; tanh(-5) * 128 = -127.98 → -128.
        assert_eq!(out, [0, 97, -97, 127, -128, 59, -128]);
    }

    #[test]
    fn matches_float_within_one_step_odd_and_monotonic() {
        for (scale, zp) in [(0.1f32, 0), (0.03, -5), (0.5, 12), (0.008, 0)] {
            let p = TanhS8::prepare(256, scale, zp).unwrap();
            let input: Vec<i8> = (-128..=127).collect();
            let mut out = [0i8; 256];
            p.run(&input, &mut out).unwrap();
            for w in out.windows(2) {
                assert!(w[0] <= w[1]);
            }
            for (&x, &y) in input.iter().zip(&out) {
                let real = f64::from(scale) * (f64::from(x) - f64::from(zp));
                let want = (128.0 * libm::tanh(real)).clamp(-128.0, 127.0);
                assert!(
                    (f64::from(y) - want).abs() <= 1.0,
                    "scale {scale} x {x}: {y} vs {want}"
                );
            }
            if zp == 0 {
                // Odd below the clamp: tanh(-x) = -tanh(x).
                for x in 1..=127usize {
                    if out[128 + x] < 127 {
                        assert_eq!(out[128 - x], -out[128 + x]);
                    }
                }
            }
        }
    }

    #[test]
    fn float_tanh() {
        let p = TanhF32::prepare(4).unwrap();
        let mut out = [0f32; 4];
        p.run(&[0.0, 0.5, -2.0, 30.0], &mut out).unwrap();
        assert_eq!(out[0], 0.0);
        assert!((f64::from(out[1]) - libm::tanh(0.5)).abs() < 1e-7);
        assert!((f64::from(out[2]) - libm::tanh(-2.0)).abs() < 1e-7);
        assert_eq!(out[3], 1.0);
    }

    #[test]
    fn round_trip_decode_and_check() {
        let p = TanhS8::prepare(10, 0.05, 4).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(TanhS8::decode(&mut Words::new(&words)), Ok(p));
        let mut bad = words.clone();
        bad[0] = 0;
        assert!(TanhS8::decode(&mut Words::new(&bad)).is_err());
        assert_eq!(
            p.check(&[9, 10]),
            Err(KernelError::BindingTooSmall {
                index: 0,
                len: 9,
                needed: 10
            })
        );
        assert_eq!(
            p.check(&[10]),
            Err(KernelError::MissingBinding { index: 1, bound: 1 })
        );
        let f = TanhF32::prepare(2).unwrap();
        let mut words = Vec::new();
        f.encode(&mut words);
        assert_eq!(TanhF32::decode(&mut Words::new(&words)), Ok(f));
        assert!(f.run(&[0.0; 2], &mut [0.0; 1]).is_err());
        assert_eq!(TanhS8::KERNEL, "tanh_s8");
        assert_eq!(TanhF32::KERNEL, "tanh_f32");
    }
}
