//! CAST, as TFLM's `cast.cc` runs it: `static_cast<To>(from)` element by element, between
//! int8, int16, int32 and float32 (TFLM's types that Ember's tensors have). Integers narrow
//! by wrapping (two's complement), widen by sign extension and become floats rounded to
//! nearest, ties to even. Floats become integers as the oracle's x86-64 build converts
//! them: truncated toward zero to `i32` (`cvttss2si`: NaN and values outside `i32` give
//! `i32::MIN`), then saturated to int8 or int16 (its packing instructions; `static_cast`
//! of an out-of-range float is undefined in C++, and this is what that build does).
//!
//! Bindings of `cast`: 0 input, 1 output, bytes (the element types are words 1 and 2).

use crate::binding_len::byte_len;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quantize::f32_to_i32_like_x86;
use crate::shape::need;
use hal_core::kernel::KernelError;

/// An element type CAST converts between, by its word; `requantize_int`'s types are its
/// integer ones, with the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastType {
    /// int8 (word 0).
    Int8,
    /// int16 (word 1).
    Int16,
    /// int32 (word 2).
    Int32,
    /// float32 (word 3).
    Float32,
}

impl CastType {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Self::Int8 => 1,
            Self::Int16 => 2,
            Self::Int32 | Self::Float32 => 4,
        }
    }

    /// Its word.
    pub const fn word(self) -> u32 {
        match self {
            Self::Int8 => 0,
            Self::Int16 => 1,
            Self::Int32 => 2,
            Self::Float32 => 3,
        }
    }

    /// The values an integer type holds; `None` for float32.
    pub const fn int_range(self) -> Option<(i32, i32)> {
        match self {
            Self::Int8 => Some((-128, 127)),
            Self::Int16 => Some((-32_768, 32_767)),
            Self::Int32 => Some((i32::MIN, i32::MAX)),
            Self::Float32 => None,
        }
    }

    /// The type of `word`, or [`KernelError::Shape`] with `what`.
    pub(crate) fn from_word(word: u32, what: &'static str) -> Result<Self, KernelError> {
        Ok(match word {
            0 => Self::Int8,
            1 => Self::Int16,
            2 => Self::Int32,
            3 => Self::Float32,
            _ => return Err(KernelError::Shape(what)),
        })
    }

    /// An element of an integer type, its bytes in the low bytes of `word`, sign-extended
    /// (float32's bits as they are).
    #[inline(always)]
    pub(crate) fn sign_extend(self, word: u32) -> i32 {
        match self {
            Self::Int8 => word as u8 as i8 as i32,
            Self::Int16 => word as u16 as i16 as i32,
            Self::Int32 | Self::Float32 => word as i32,
        }
    }
}

/// Bindings 0 and 1 hold `len` elements of `from` and `to`.
pub(crate) fn check_typed(
    len: usize,
    (from, to): (CastType, CastType),
    binding_lens: &[usize],
) -> Result<(), KernelError> {
    need(binding_lens, 0, len, from.size())?;
    need(binding_lens, 1, len, to.size())
}

/// Writes `convert` of each of the first `len` elements of `from` in `input` (its bytes in the
/// low bytes of a word, little-endian) as an element of `to` in `output` (the low bytes of the
/// word `convert` returns), after [`check_typed`].
#[inline(always)]
pub(crate) fn map_typed(
    len: usize,
    (from, to): (CastType, CastType),
    input: &[u8],
    output: &mut [u8],
    convert: impl Fn(u32) -> u32,
) -> Result<(), KernelError> {
    check_typed(len, (from, to), &[input.len(), output.len()])?;
    let (from, to) = (from.size(), to.size());
    for (source, target) in input
        .chunks_exact(from)
        .zip(output.chunks_exact_mut(to))
        .take(len)
    {
        let word = source
            .iter()
            .rev()
            .fold(0u32, |word, &byte| word << 8 | u32::from(byte));
        target.copy_from_slice(&convert(word).to_le_bytes()[..to]);
    }
    Ok(())
}

/// `cast`. Words: `len`, the input's [`CastType`] word, the output's. `decode` refuses a zero
/// or overflowing length and an unknown type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cast {
    /// Elements.
    pub len: usize,
    /// The input's type.
    pub from: CastType,
    /// The output's type.
    pub to: CastType,
}

impl Cast {
    const WHAT: &'static str =
        "cast: zero or overflowing length, or a type other than int8, int16, int32 and float32";

    /// The parameters for `len` elements.
    pub fn new(len: usize, from: CastType, to: CastType) -> Result<Self, KernelError> {
        byte_len(len, 4, Self::WHAT)?;
        Ok(Self { len, from, to })
    }

    /// Bindings 0 and 1 hold `len` elements of their types.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_typed(self.len, (self.from, self.to), binding_lens)
    }

    /// The output element, as little-endian bytes in the low bytes of a word, of input
    /// element `word` (the same).
    #[inline(always)]
    fn convert(&self, word: u32) -> u32 {
        if self.from == CastType::Float32 {
            if self.to == CastType::Float32 {
                return word;
            }
            let truncated = f32_to_i32_like_x86(libm::truncf(f32::from_bits(word)));
            // Saturated to int8 or int16 (int32's range keeps every value).
            let (lowest, highest) = self.to.int_range().unwrap_or((i32::MIN, i32::MAX));
            return truncated.clamp(lowest, highest) as u32;
        }
        let integer = self.from.sign_extend(word);
        match self.to {
            CastType::Float32 => (integer as f32).to_bits(),
            // The low bytes: the caller keeps `size` of them, wrapping.
            _ => integer as u32,
        }
    }

    /// Runs the cast over the bindings' bytes.
    pub fn run(&self, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        map_typed(self.len, (self.from, self.to), input, output, |word| {
            self.convert(word)
        })
    }
}

impl KernelParams for Cast {
    const KERNEL: &'static str = "cast";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.len as u32, self.from.word(), self.to.word()]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let len = words.usize()?;
        let from = CastType::from_word(words.u32()?, Self::WHAT)?;
        let to = CastType::from_word(words.u32()?, Self::WHAT)?;
        Self::new(len, from, to)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    fn cast(from: CastType, to: CastType, input: &[u8]) -> Vec<u8> {
        let len = input.len() / from.size();
        let params = Cast::new(len, from, to).unwrap();
        let mut output = std::vec![0u8; len * to.size()];
        params.run(input, &mut output).unwrap();
        output
    }

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn ints(values: &[i32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn integers_wrap_and_extend() {
        use CastType::*;
        assert_eq!(cast(Int32, Int8, &ints(&[300, -129, 127])), [44, 127, 127]);
        assert_eq!(cast(Int8, Int32, &[0xff, 0x80]), ints(&[-1, -128]));
        assert_eq!(cast(Int8, Int16, &[0xfe]), (-2i16).to_le_bytes());
        assert_eq!(cast(Int16, Int8, &0x1234i16.to_le_bytes()), [0x34]);
    }

    #[test]
    fn floats_truncate_and_round() {
        use CastType::*;
        let truncated = cast(Float32, Int32, &floats(&[2.9, -2.9, 3.0e9, f32::NAN]));
        assert_eq!(truncated, ints(&[2, -2, i32::MIN, i32::MIN]));
        // Truncated to i32, then saturated: 300 → 127, -1.5 → -1, NaN → -128.
        assert_eq!(
            cast(Float32, Int8, &floats(&[300.5, -1.5, f32::NAN])),
            [127, 0xff, 0x80]
        );
        assert_eq!(
            cast(Float32, Int16, &floats(&[-4.0e4])),
            (-32_768i16).to_le_bytes()
        );
        // 2^24 + 1 is no f32: to nearest, ties to even.
        let rounded = cast(Int32, Float32, &ints(&[16_777_217, 16_777_219, i32::MIN]));
        assert_eq!(
            rounded,
            floats(&[16_777_216.0, 16_777_220.0, -2_147_483_648.0])
        );
        assert_eq!(
            cast(Float32, Float32, &floats(&[f32::NAN])),
            floats(&[f32::NAN])
        );
    }

    #[test]
    fn words_and_checks() {
        let params = Cast::new(3, CastType::Int16, CastType::Float32).unwrap();
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words, [3, 1, 3]);
        assert_eq!(Cast::decode(&mut Words::new(&words)), Ok(params));
        assert!(Cast::decode(&mut Words::new(&[3, 4, 0])).is_err());
        assert!(params.check(&[6, 11]).is_err());
        assert!(params.check(&[6, 12]).is_ok());
    }
}
