//! EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER and GREATER_EQUAL, as TFLM's
//! `comparisons.cc` runs them: one bool per pair of (broadcast) input values. float32 and
//! int32 compare the raw values (a NaN is unequal to everything, itself included, and
//! orders with nothing); int8 compares each value rescaled as TFLM's Prepare sets it up
//! (`ComparisonWithScaling`): `(value - zero_point) << 8`, times the input's scale as a
//! multiplier below one (`MultiplyByQuantizedMultiplierSmallerThanOneExp`), so inputs of
//! different quantizations compare by their real values.
//!
//! Bindings of `comparison`: 0 input 1, 1 input 2 (int8, int32 or float32 by the
//! [`ComparedValues`], as bytes), 2 output (bool: one byte, 0 or 1), sized by the
//! [`BroadcastShape`].

use crate::broadcast::BroadcastShape;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// Which comparison: word `predicate` of the kernel, in this order from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    /// EQUAL: `a == b`.
    Equal,
    /// NOT_EQUAL: `a != b`.
    NotEqual,
    /// LESS: `a < b`.
    Less,
    /// LESS_EQUAL: `a <= b`.
    LessEqual,
    /// GREATER: `a > b`.
    Greater,
    /// GREATER_EQUAL: `a >= b`.
    GreaterEqual,
}

impl Predicate {
    const ALL: [Predicate; 6] = [
        Self::Equal,
        Self::NotEqual,
        Self::Less,
        Self::LessEqual,
        Self::Greater,
        Self::GreaterEqual,
    ];

    /// Whether it holds of `a` and `b` (C++'s operators: with a NaN only NOT_EQUAL holds).
    #[inline(always)]
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Self::Equal => a == b,
            Self::NotEqual => a != b,
            Self::Less => a < b,
            Self::LessEqual => a <= b,
            Self::Greater => a > b,
            Self::GreaterEqual => a >= b,
        }
    }
}

/// One int8 input's rescaling (TFLM's `input*_offset`, `input*_multiplier`,
/// `input*_shift`): `value` becomes `srdhm((value + offset) << 8, multiplier)` rounded down
/// by `-shift` bits. `shift` is at most 0, as TFLM's `...SmallerThanOneExp` requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComparisonScaling {
    /// Minus the zero point.
    pub offset: i32,
    /// The scale as a Q31 multiplier.
    pub multiplier: i32,
    /// The scale's power of two, at most 0.
    pub shift: i32,
}

/// TFLM's fixed left shift before the multiplier.
const LEFT_SHIFT: u32 = 8;

impl ComparisonScaling {
    /// The rescaling of an input of `scale` (positive and below 1, as TFLM requires) and
    /// `zero_point`.
    pub fn new(scale: f64, zero_point: i32) -> Result<Self, KernelError> {
        if scale <= 0.0 || scale >= 1.0 || scale.is_nan() || !(-128..=127).contains(&zero_point) {
            return Err(KernelError::Shape(
                "comparison: an int8 input's scale must lie in (0, 1) and its zero point in int8",
            ));
        }
        let (multiplier, shift) = quantize_multiplier(scale);
        Self {
            offset: -zero_point,
            multiplier,
            shift,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        if !(-128..=127).contains(&-self.offset)
            || self.multiplier < 0
            || !(-31..=0).contains(&self.shift)
        {
            return Err(KernelError::Shape(
                "comparison: an offset outside int8, a negative multiplier or a shift outside -31..=0",
            ));
        }
        Ok(self)
    }

    /// The value TFLM compares for the raw int8 `value`.
    #[inline(always)]
    pub fn apply(&self, value: i8) -> i32 {
        // At most 255 << 8: no overflow.
        let shifted = (i32::from(value) + self.offset) << LEFT_SHIFT;
        // With `shift` at most 0 this is TFLM's `...SmallerThanOneExp`.
        multiply_by_quantized_multiplier(shifted, self.multiplier, self.shift)
    }
}

/// What the inputs hold: word `kind` (0 int8, 1 int32, 2 float32), then for int8 both
/// inputs' [`ComparisonScaling`] (6 words; zeros otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparedValues {
    /// int8, each input rescaled.
    Int8(ComparisonScaling, ComparisonScaling),
    /// int32, raw.
    Int32,
    /// float32, raw.
    Float32,
}

impl ComparedValues {
    /// Bytes per input element.
    pub fn element_bytes(&self) -> usize {
        match self {
            Self::Int8(..) => 1,
            Self::Int32 | Self::Float32 => 4,
        }
    }
}

/// `comparison`. Words: the [`BroadcastShape`]'s 12, `predicate` ([`Predicate`] from 0),
/// `kind` and six scaling words ([`ComparedValues`]). `decode` refuses other predicates
/// and kinds and scalings `ComparisonScaling::new` could not give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    /// What is compared.
    pub predicate: Predicate,
    /// What the inputs hold.
    pub values: ComparedValues,
}

/// Element `index` of little-endian 4-byte words.
#[inline(always)]
fn word(bytes: &[u8], index: usize) -> [u8; 4] {
    let mut out = [0u8; 4];
    out.copy_from_slice(&bytes[index * 4..index * 4 + 4]);
    out
}

impl Comparison {
    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        let elem = self.values.element_bytes();
        let n = |dims: &[usize]| dims.iter().product::<usize>();
        need(binding_lens, 0, n(&self.shape.input1), elem)?;
        need(binding_lens, 1, n(&self.shape.input2), elem)?;
        need(binding_lens, 2, self.shape.len(), 1)
    }

    /// Runs the kernel: `output[e]` is 1 where the predicate holds of element `e`'s inputs.
    pub fn run(&self, input1: &[u8], input2: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
        self.check(&[input1.len(), input2.len(), output.len()])?;
        let predicate = self.predicate;
        match self.values {
            ComparedValues::Int8(scale1, scale2) => self.apply(output, |a, b| {
                predicate.holds(scale1.apply(input1[a] as i8), scale2.apply(input2[b] as i8))
            }),
            ComparedValues::Int32 => self.apply(output, |a, b| {
                predicate.holds(
                    i32::from_le_bytes(word(input1, a)),
                    i32::from_le_bytes(word(input2, b)),
                )
            }),
            ComparedValues::Float32 => self.apply(output, |a, b| {
                predicate.holds(
                    f32::from_le_bytes(word(input1, a)),
                    f32::from_le_bytes(word(input2, b)),
                )
            }),
        }
        Ok(())
    }

    /// Sets every output byte to `holds(input1 index, input2 index)`.
    #[inline(always)]
    fn apply(&self, output: &mut [u8], holds: impl Fn(usize, usize) -> bool) {
        self.shape
            .apply_indices(output, |a, b| u8::from(holds(a, b)));
    }
}

impl KernelParams for Comparison {
    const KERNEL: &'static str = "comparison";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        let predicate = Predicate::ALL
            .iter()
            .position(|&p| p == self.predicate)
            .unwrap_or(0) as u32;
        let (kind, scalings) = match self.values {
            ComparedValues::Int8(a, b) => (0, [a, b]),
            ComparedValues::Int32 => (1, [ComparisonScaling::ZERO; 2]),
            ComparedValues::Float32 => (2, [ComparisonScaling::ZERO; 2]),
        };
        out.extend([predicate, kind]);
        for scaling in scalings {
            out.extend([
                scaling.offset as u32,
                scaling.multiplier as u32,
                scaling.shift as u32,
            ]);
        }
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        const WHAT: &str = "comparison: a predicate above 5 or a kind above 2";
        let shape = BroadcastShape::decode(words)?;
        let predicate = *Predicate::ALL
            .get(words.usize()?)
            .ok_or(KernelError::Shape(WHAT))?;
        let kind = words.u32()?;
        let mut scaling = || -> Result<ComparisonScaling, KernelError> {
            Ok(ComparisonScaling {
                offset: words.i32()?,
                multiplier: words.i32()?,
                shift: words.i32()?,
            })
        };
        let (first, second) = (scaling()?, scaling()?);
        let values = match kind {
            0 => ComparedValues::Int8(first.validate()?, second.validate()?),
            1 => ComparedValues::Int32,
            2 => ComparedValues::Float32,
            _ => return Err(KernelError::Shape(WHAT)),
        };
        Ok(Self {
            shape,
            predicate,
            values,
        })
    }
}

impl ComparisonScaling {
    /// The words a float32 or int32 comparison carries in their place.
    const ZERO: Self = Self {
        offset: 0,
        multiplier: 0,
        shift: 0,
    };
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn floats_with_nan_and_broadcasting() {
        let shape = BroadcastShape::new(&[2, 2], &[2]).unwrap();
        let a = floats(&[1.0, f32::NAN, 3.0, -0.0]);
        let b = floats(&[1.0, 2.0]);
        let mut out = [9u8; 4];
        let run = |predicate, out: &mut [u8]| {
            Comparison {
                shape,
                predicate,
                values: ComparedValues::Float32,
            }
            .run(&a, &b, out)
            .unwrap()
        };
        run(Predicate::Equal, &mut out);
        assert_eq!(out, [1, 0, 0, 0]);
        run(Predicate::NotEqual, &mut out);
        assert_eq!(out, [0, 1, 1, 1]);
        run(Predicate::GreaterEqual, &mut out);
        assert_eq!(out, [1, 0, 1, 0]);
        run(Predicate::Less, &mut out);
        assert_eq!(out, [0, 0, 0, 1]);
    }

    #[test]
    fn int8_compares_real_values() {
        // 0.5 * (10 - 0) = 5.0 against 0.25 * (30 - 10) = 5.0: equal in real values.
        let shape = BroadcastShape::new(&[1], &[1]).unwrap();
        let values = ComparedValues::Int8(
            ComparisonScaling::new(0.5, 0).unwrap(),
            ComparisonScaling::new(0.25, 10).unwrap(),
        );
        let mut out = [0u8; 1];
        let params = Comparison {
            shape,
            predicate: Predicate::Equal,
            values,
        };
        params.run(&[10], &[30], &mut out).unwrap();
        assert_eq!(out, [1]);
        params.run(&[10], &[31], &mut out).unwrap();
        assert_eq!(out, [0]);
        assert!(ComparisonScaling::new(1.0, 0).is_err());
    }

    #[test]
    fn words_round_trip_and_bad_words_are_refused() {
        let params = Comparison {
            shape: BroadcastShape::new(&[3, 1], &[4]).unwrap(),
            predicate: Predicate::LessEqual,
            values: ComparedValues::Int8(
                ComparisonScaling::new(0.02, -3).unwrap(),
                ComparisonScaling::new(0.7, 100).unwrap(),
            ),
        };
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 20);
        assert_eq!(Comparison::decode(&mut Words::new(&words)).unwrap(), params);
        let mut bad = words.clone();
        bad[12] = 6;
        assert!(Comparison::decode(&mut Words::new(&bad)).is_err());
        let mut bad = words;
        bad[13] = 3;
        assert!(Comparison::decode(&mut Words::new(&bad)).is_err());
    }
}
