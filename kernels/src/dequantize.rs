//! DEQUANTIZE, as TFLM's `dequantize.cc` runs it for int8, uint8 and int16:
//! `dequantize_s8_f32`, `dequantize_u8_f32` and `dequantize_s16_f32` through
//! `reference_ops::Dequantize`, `(float)(scale * (x - zero_point))` with the scale as a
//! double (the tensor's `f32` scale widened) and the product rounded once to `f32`.
//!
//! Bindings: 0 `input` (`len` `i8` / `u8` / `i16`), 1 `output` (`len` `f32`).

use crate::affine::{Affine, AffineConversion};

/// `dequantize_s8_f32`: int8 to float. Words and refusals: [`Affine`]'s.
pub type DequantizeS8F32 = Affine<Dequantize>;

/// int8 to float, as the [`AffineConversion`] of DEQUANTIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequantize;

impl AffineConversion for Dequantize {
    const KERNEL: &'static str = "dequantize_s8_f32";
    const WHAT: &'static str =
        "dequantize_s8_f32: zero or overflowing length, scale not positive and finite, or zero point outside int8";
    type Input = i8;
    type Output = f32;

    #[inline(always)]
    fn convert(x: i8, scale: f32, zero_point: i32) -> f32 {
        (f64::from(scale) * f64::from(i32::from(x) - zero_point)) as f32
    }
}

/// `dequantize_u8_f32`: uint8 to float. Words and refusals: [`Affine`]'s, zero points
/// in `0..=255`.
pub type DequantizeU8F32 = Affine<DequantizeU8>;

/// uint8 to float, as the [`AffineConversion`] of DEQUANTIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DequantizeU8;

impl AffineConversion for DequantizeU8 {
    const KERNEL: &'static str = "dequantize_u8_f32";
    const WHAT: &'static str =
        "dequantize_u8_f32: zero or overflowing length, scale not positive and finite, or zero point outside uint8";
    const ZERO_POINTS: (i32, i32) = (0, 255);
    type Input = u8;
    type Output = f32;

    #[inline(always)]
    fn convert(x: u8, scale: f32, zero_point: i32) -> f32 {
        (f64::from(scale) * f64::from(i32::from(x) - zero_point)) as f32
    }
}

/// `dequantize_s16_f32`: int16 to float. Words and refusals: [`Affine`]'s, zero points
/// in int16's range.
pub type DequantizeS16F32 = Affine<DequantizeS16>;

/// int16 to float, as the [`AffineConversion`] of DEQUANTIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DequantizeS16;

impl AffineConversion for DequantizeS16 {
    const KERNEL: &'static str = "dequantize_s16_f32";
    const WHAT: &'static str =
        "dequantize_s16_f32: zero or overflowing length, scale not positive and finite, or zero point outside int16";
    const ZERO_POINTS: (i32, i32) = (-32_768, 32_767);
    type Input = i16;
    type Output = f32;

    #[inline(always)]
    fn convert(x: i16, scale: f32, zero_point: i32) -> f32 {
        (f64::from(scale) * f64::from(i32::from(x) - zero_point)) as f32
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use crate::params::{KernelParams, Words};
    use hal_core::kernel::KernelError;

    #[test]
    fn dequantizes_in_double() {
        let p = DequantizeS8F32::prepare(4, 0.1, -128).unwrap();
        let mut out = [0f32; 4];
        p.run(&[-128, 127, 0, -1], &mut out).unwrap();
        let s = f64::from(0.1f32);
        assert_eq!(
            out,
            [
                0.0,
                (s * 255.0) as f32,
                (s * 128.0) as f32,
                (s * 127.0) as f32
            ]
        );
        // The double product can differ from the f32 one: 0.1f * 255 in f32 is not it.
        assert_eq!(out[1], 25.5f64.min(s * 255.0) as f32);
    }

    #[test]
    fn round_trip_decode_and_check() {
        let p = DequantizeS8F32::prepare(3, 0.5, 2).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(DequantizeS8F32::decode(&mut Words::new(&words)), Ok(p));
        assert!(DequantizeS8F32::decode(&mut Words::new(&[0, 1f32.to_bits(), 0])).is_err());
        assert!(DequantizeS8F32::decode(&mut Words::new(&[3, (-1f32).to_bits(), 0])).is_err());
        assert!(
            DequantizeS8F32::decode(&mut Words::new(&[3, 1f32.to_bits(), -129i32 as u32])).is_err()
        );
        assert_eq!(
            p.check(&[3, 11]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 11,
                needed: 12
            })
        );
        assert!(p.run(&[0; 2], &mut [0.0; 3]).is_err());
        assert_eq!(DequantizeS8F32::KERNEL, "dequantize_s8_f32");
    }

    #[test]
    fn int16_takes_int16_zero_points() {
        let p = DequantizeS16F32::prepare(3, 0.25, -1000).unwrap();
        let mut out = [0f32; 3];
        p.run(&[-1000, 32_767, -32_768], &mut out).unwrap();
        assert_eq!(out, [0.0, 8441.75, -7942.0]);
        assert!(DequantizeS16F32::prepare(1, 0.5, 32_768).is_err());
        assert_eq!(DequantizeS16F32::KERNEL, "dequantize_s16_f32");
    }

    #[test]
    fn uint8_takes_uint8_zero_points() {
        let p = DequantizeU8F32::prepare(3, 0.5, 200).unwrap();
        let mut out = [0f32; 3];
        p.run(&[200, 255, 0], &mut out).unwrap();
        assert_eq!(out, [0.0, 27.5, -100.0]);
        assert!(DequantizeU8F32::prepare(1, 0.5, -1).is_err());
        assert!(DequantizeU8F32::prepare(1, 0.5, 256).is_err());
        assert_eq!(DequantizeU8F32::KERNEL, "dequantize_u8_f32");
    }
}
