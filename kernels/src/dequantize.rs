//! DEQUANTIZE, as TFLM's `dequantize.cc` runs it for int8: `dequantize_s8_f32` through
//! `reference_ops::Dequantize`, `(float)(scale * (x - zero_point))` with the scale as a
//! double (the tensor's `f32` scale widened) and the product rounded once to `f32`.
//!
//! Bindings: 0 `input` (`len` `i8`), 1 `output` (`len` `f32`).

use hal_core::kernel::KernelError;

use crate::binding_len::{byte_len, require, slice_bytes};
use crate::params::{KernelParams, Words};

/// `dequantize_s8_f32`: int8 to float.
///
/// Words: `len`, `scale` (its `f32` bits), `zero_point`. `decode` refuses (with
/// [`KernelError::Shape`]) a zero or overflowing length, a scale that is not positive and
/// finite and a zero point outside `-128..=127`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DequantizeS8F32 {
    /// Elements.
    pub len: usize,
    /// The input's scale.
    pub scale: f32,
    /// The input's zero point.
    pub zero_point: i32,
}

impl DequantizeS8F32 {
    const WHAT: &'static str =
        "dequantize_s8_f32: zero or overflowing length, scale not positive and finite, or zero point outside int8";

    /// The parameters TFLM's `DequantizePrepare` keeps for `len` elements: the input's
    /// (per-tensor) scale and zero point.
    pub fn prepare(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
    ) -> Result<Self, KernelError> {
        Self {
            len,
            scale: input_scale,
            zero_point: input_zero_point,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 4, Self::WHAT)?;
        if !(self.scale > 0.0 && self.scale.is_finite() && (-128..=127).contains(&self.zero_point))
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 (`input`, `len` bytes) and 1 (`output`, `4 * len` bytes):
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        require(binding_lens, 0, self.len)?;
        require(binding_lens, 1, self.len * 4)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[i8], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[slice_bytes(input), slice_bytes(output)])?;
        let scale = f64::from(self.scale);
        for (&x, y) in input.iter().zip(output.iter_mut()).take(self.len) {
            *y = (scale * f64::from(i32::from(x) - self.zero_point)) as f32;
        }
        Ok(())
    }
}

impl KernelParams for DequantizeS8F32 {
    const KERNEL: &'static str = "dequantize_s8_f32";

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.scale.to_bits(),
            self.zero_point as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            scale: words.f32()?,
            zero_point: words.i32()?,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

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
}
