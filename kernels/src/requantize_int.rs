//! QUANTIZE between quantized integer tensors of which one is 16 or 32 bits wide (int16 to
//! int8, int16, int32; int8 to int16, int32; int32 to int8, int16), as TFLM's
//! `quantize_common.cc` runs it through `reference_ops::Requantize`:
//! `clamp(MultiplyByQuantizedMultiplier(x - input_zero_point, multiplier, shift) +
//! output_zero_point)` to the output type's range, the subtraction and the addition in
//! wrapping int32 (an int32 input or output can overflow them; TFLM's C++ wraps there on
//! the oracle's build).
//!
//! Bindings of `requantize_int`: 0 input, 1 output, bytes (the element types are words 1
//! and 2); the output must not alias the input.

use crate::binding_len::byte_len;
use crate::cast::{check_typed, map_typed, CastType};
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use crate::quantize::positive;
use hal_core::kernel::KernelError;

/// `requantize_int`. Words: `len`, the input's [`CastType`] word, the output's,
/// `input_zero_point`, `output_zero_point`, `multiplier`, `shift`. `decode` refuses a zero
/// or overflowing length, an unknown type or float32, zero points outside their types, a
/// negative multiplier and a shift outside `-31..=31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequantizeInt {
    /// Elements.
    pub len: usize,
    /// The input's type: int8, int16 or int32.
    pub from: CastType,
    /// The output's type: int8, int16 or int32.
    pub to: CastType,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// `input_scale / output_scale` as a Q31 multiplier (TFLM's
    /// `requantize_output_multiplier`).
    pub multiplier: i32,
    /// Its exponent (TFLM's `requantize_output_shift`).
    pub shift: i32,
}

impl RequantizeInt {
    const WHAT: &'static str = "requantize_int: zero or overflowing length, unknown or float type, zero points outside their types, scale ratio of 2^31 or more, or multiplier/shift out of range";

    /// The parameters TFLM's `PrepareQuantizeReference` computes for `len` elements:
    /// `QuantizeMultiplier(double(input_scale) / double(output_scale))`. Refuses scales
    /// that are not positive and finite, a ratio of `2^31` or more (a shift above 31) and
    /// what `decode` refuses.
    pub fn prepare(
        len: usize,
        (from, to): (CastType, CastType),
        (input_scale, input_zero_point): (f32, i32),
        (output_scale, output_zero_point): (f32, i32),
    ) -> Result<Self, KernelError> {
        if !positive(input_scale) || !positive(output_scale) {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let (multiplier, shift) =
            quantize_multiplier(f64::from(input_scale) / f64::from(output_scale));
        Self {
            len,
            from,
            to,
            input_zero_point,
            output_zero_point,
            multiplier,
            shift,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 4, Self::WHAT)?;
        // Float32 has no range: refused.
        let within = |ty: CastType, value: i32| {
            ty.int_range()
                .is_some_and(|(lowest, highest)| (lowest..=highest).contains(&value))
        };
        if !within(self.from, self.input_zero_point)
            || !within(self.to, self.output_zero_point)
            || self.multiplier < 0
            || !(-31..=31).contains(&self.shift)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 and 1 hold `len` elements of their types.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_typed(self.len, (self.from, self.to), binding_lens)
    }

    /// One output element of input `x`.
    #[inline(always)]
    pub fn requantize(&self, x: i32) -> i32 {
        let centered = x.wrapping_sub(self.input_zero_point);
        let scaled = multiply_by_quantized_multiplier(centered, self.multiplier, self.shift);
        // `validate` keeps float32 out: the fallback is never taken.
        let (lowest, highest) = self.to.int_range().unwrap_or((i32::MIN, i32::MAX));
        scaled
            .wrapping_add(self.output_zero_point)
            .clamp(lowest, highest)
    }

    /// Runs the kernel over the bindings' bytes, after [`check`](Self::check)ing their
    /// lengths.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        map_typed(self.len, (self.from, self.to), input, output, |word| {
            self.requantize(self.from.sign_extend(word)) as u32
        })
    }
}

impl KernelParams for RequantizeInt {
    const KERNEL: &'static str = "requantize_int";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.from.word(),
            self.to.word(),
            self.input_zero_point as u32,
            self.output_zero_point as u32,
            self.multiplier as u32,
            self.shift as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            from: CastType::from_word(words.u32()?, Self::WHAT)?,
            to: CastType::from_word(words.u32()?, Self::WHAT)?,
            input_zero_point: words.i32()?,
            output_zero_point: words.i32()?,
            multiplier: words.i32()?,
            shift: words.i32()?,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;
    use CastType::{Float32, Int16, Int32, Int8};

    fn run(p: &RequantizeInt, input: &[u8]) -> Vec<u8> {
        let mut out = std::vec![0u8; p.len * p.to.size()];
        p.run(input, &mut out).unwrap();
        out
    }

    #[test]
    fn int16_to_int8_halves_and_clamps() {
        let p = RequantizeInt::prepare(4, (Int16, Int8), (0.1, 0), (0.2, 5)).unwrap();
        let input: Vec<u8> = [0i16, 3, -3, 30_000]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        // 0 → 5; 1.5 → 2 → 7; -1.5 → -1 (the doubling high multiply rounds negative ties
        // toward zero) → 4; 15000 → 127.
        let out: Vec<i8> = run(&p, &input).iter().map(|&b| b as i8).collect();
        assert_eq!(out, [5, 7, 4, 127]);
    }

    #[test]
    fn int32_wraps_as_tflm() {
        // x - zero_point wraps: i32::MIN - 1 is i32::MAX, which halves to 2^30, clamped.
        let p = RequantizeInt::prepare(2, (Int32, Int16), (0.5, 1), (1.0, 0)).unwrap();
        let input: Vec<u8> = [i32::MIN, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = run(&p, &input);
        assert_eq!(
            [
                i16::from_le_bytes([out[0], out[1]]),
                i16::from_le_bytes([out[2], out[3]])
            ],
            [32_767, 0]
        );
        // int8 to int32: no clamp, the output zero point added wrapping.
        let p = RequantizeInt::prepare(1, (Int8, Int32), (2.0, 0), (1.0, i32::MAX)).unwrap();
        let out = run(&p, &[1]);
        assert_eq!(
            i32::from_le_bytes([out[0], out[1], out[2], out[3]]),
            i32::MAX.wrapping_add(2)
        );
    }

    #[test]
    fn round_trips_decode_and_refuses() {
        let p = RequantizeInt::prepare(3, (Int16, Int32), (0.5, -7), (0.25, 9)).unwrap();
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(RequantizeInt::decode(&mut Words::new(&words)), Ok(p));
        for (index, bad) in [(0, 0), (1, 3), (2, 3), (2, 7), (6, 32), (5, u32::MAX)] {
            let mut broken = words.clone();
            broken[index] = bad;
            assert!(RequantizeInt::decode(&mut Words::new(&broken)).is_err());
        }
        assert!(RequantizeInt::prepare(1, (Int8, Int16), (1.0, 128), (1.0, 0)).is_err());
        assert!(RequantizeInt::prepare(1, (Int8, Int16), (1.0, 0), (1.0, 32_768)).is_err());
        assert!(RequantizeInt::prepare(1, (Int8, Int16), (1.0e10, 0), (1.0, 0)).is_err());
        assert!(RequantizeInt::prepare(1, (Int8, Int16), (1.0, 0), (0.0, 0)).is_err());
        assert!(RequantizeInt::prepare(1, (Float32, Int16), (1.0, 0), (1.0, 0)).is_err());
        assert!(RequantizeInt::prepare(1, (Int8, Float32), (1.0, 0), (1.0, 0)).is_err());
        assert_eq!(
            p.check(&[6, 11]),
            Err(KernelError::BindingTooSmall {
                index: 1,
                len: 11,
                needed: 12
            })
        );
        assert_eq!(RequantizeInt::KERNEL, "requantize_int");
    }
}
