//! MAXIMUM and MINIMUM, as TFLM's `maximum_minimum.cc` runs them: `a > b ? a : b` and
//! `a < b ? a : b` with TFLite's broadcasting, on the raw values (int8 quantization plays
//! no part; TFLM checks none), no activation. `maximum_f32` and `minimum_f32` are
//! [`BroadcastF32`] kernels (an infinite clamp range); `maximum_s8` and `minimum_s8` are
//! [`SelectS8`] kernels.
//!
//! Bindings, every kernel: 0 input 1, 1 input 2, 2 output (`f32` or `i8` each), sized by
//! the [`BroadcastShape`].

use crate::broadcast::BroadcastShape;
use crate::broadcast_f32::{BinaryFunctionF32, BroadcastF32};
use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;
use hal_core::kernel::KernelError;

/// What sets MAXIMUM apart from MINIMUM: which of two values each keeps.
pub trait Select {
    /// The float kernel's name.
    const KERNEL_F32: &'static str;
    /// The int8 kernel's name.
    const KERNEL_S8: &'static str;
    /// Whether `a` is kept over `b` (TFLM's `a > b` or `a < b`); `b` otherwise.
    fn keeps<T: PartialOrd>(a: T, b: T) -> bool;
}

/// MAXIMUM: `a > b ? a : b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maximum;

impl Select for Maximum {
    const KERNEL_F32: &'static str = "maximum_f32";
    const KERNEL_S8: &'static str = "maximum_s8";

    #[inline(always)]
    fn keeps<T: PartialOrd>(a: T, b: T) -> bool {
        a > b
    }
}

/// MINIMUM: `a < b ? a : b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minimum;

impl Select for Minimum {
    const KERNEL_F32: &'static str = "minimum_f32";
    const KERNEL_S8: &'static str = "minimum_s8";

    #[inline(always)]
    fn keeps<T: PartialOrd>(a: T, b: T) -> bool {
        a < b
    }
}

/// The float function of a [`Select`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectF32<S>(PhantomData<S>);

impl<S: Select> BinaryFunctionF32 for SelectF32<S> {
    const KERNEL: &'static str = S::KERNEL_F32;

    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        if S::keeps(a, b) {
            a
        } else {
            b
        }
    }
}

/// `maximum_f32`. Words: [`BroadcastF32`]'s (the lowering passes an infinite range).
pub type MaximumF32 = BroadcastF32<SelectF32<Maximum>>;
/// `minimum_f32`. Words: [`BroadcastF32`]'s (the lowering passes an infinite range).
pub type MinimumF32 = BroadcastF32<SelectF32<Minimum>>;

/// Parameters of an int8 [`Select`] kernel: the inputs' shapes. Words: [`BroadcastShape`]'s
/// 12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectS8<S> {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    select: PhantomData<S>,
}

/// `maximum_s8`.
pub type MaximumS8 = SelectS8<Maximum>;
/// `minimum_s8`.
pub type MinimumS8 = SelectS8<Minimum>;

impl<S: Select> SelectS8<S> {
    /// The parameters for inputs of `shape`.
    pub fn new(shape: BroadcastShape) -> Self {
        Self {
            shape,
            select: PhantomData,
        }
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the kernel.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.shape.check_and_apply(
            input1,
            input2,
            output,
            |a, b| if S::keeps(a, b) { a } else { b },
        )
    }
}

impl<S: Select> KernelParams for SelectS8<S> {
    const KERNEL: &'static str = S::KERNEL_S8;
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self::new(BroadcastShape::decode(words)?))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn selects_with_broadcasting() {
        let shape = BroadcastShape::new(&[2, 2], &[1, 2]).unwrap();
        let mut out = [0i8; 4];
        MaximumS8::new(shape)
            .run(&[-5, 7, 3, -128], &[0, 2], &mut out)
            .unwrap();
        assert_eq!(out, [0, 7, 3, 2]);
        MinimumS8::new(shape)
            .run(&[-5, 7, 3, -128], &[0, 2], &mut out)
            .unwrap();
        assert_eq!(out, [-5, 2, 0, -128]);
        let mut out = [0.0f32; 4];
        let (lo, hi) = (f32::NEG_INFINITY, f32::INFINITY);
        MaximumF32::new(shape, lo, hi)
            .run(&[-1.5, 2.0, 0.25, -0.0], &[0.0, 1.0], &mut out)
            .unwrap();
        assert_eq!(out, [0.0, 2.0, 0.25, 1.0]);
        MinimumF32::new(shape, lo, hi)
            .run(&[-1.5, 2.0, 0.25, -0.0], &[0.0, 1.0], &mut out)
            .unwrap();
        assert_eq!(out, [-1.5, 1.0, 0.0, -0.0]);
    }

    #[test]
    fn names_words_and_checks() {
        assert_eq!(MaximumS8::KERNEL, "maximum_s8");
        assert_eq!(MinimumS8::KERNEL, "minimum_s8");
        assert_eq!(MaximumF32::KERNEL, "maximum_f32");
        assert_eq!(MinimumF32::KERNEL, "minimum_f32");
        let params = MaximumS8::new(BroadcastShape::new(&[3, 4], &[4]).unwrap());
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(words.len(), 12);
        assert_eq!(MaximumS8::decode(&mut Words::new(&words)), Ok(params));
        assert!(params.check(&[12, 4, 12]).is_ok());
        assert!(params.check(&[12, 4, 11]).is_err());
        assert!(params.run(&[0; 12], &[0; 3], &mut [0; 12]).is_err());
    }
}
