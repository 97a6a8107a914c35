//! SUM, REDUCE_MAX and REDUCE_MIN over [`MeanShape`]'s axes, as TFLM's `reduce.cc` runs
//! them through `reference_ops::ReduceGeneric`: each output starts at the reducer's initial
//! value and takes its inputs in input (row-major) order. Float SUM adds in `f32` (`0 +
//! x0 + x1 + …`, the bits TFLM gets); MAX and MIN keep `in > current ? in : current` (and
//! `<`), so a NaN input never replaces a number. int8 MAX and MIN compare raw values (TFLM
//! requires the input's quantization on the output). int8 SUM, which TFLM requantizes, is
//! not here.
//!
//! Bindings of `sum_f32`, `reduce_max_f32`, `reduce_min_f32`, `reduce_max_s8` and
//! `reduce_min_s8`: 0 input, 1 output (`f32` or `i8`).

use crate::mean::MeanShape;
use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;
use hal_core::kernel::KernelError;

/// What sets one reduction apart from another.
pub trait Reducer {
    /// The float kernel's name.
    const KERNEL_F32: &'static str;
    /// The float start value.
    const INITIAL_F32: f32;
    /// The float accumulation.
    fn reduce_f32(current: f32, input: f32) -> f32;
}

/// A reduction on raw int8 values (MAX and MIN: SUM's int8 form requantizes).
pub trait ReducerS8: Reducer {
    /// The int8 kernel's name.
    const KERNEL_S8: &'static str;
    /// The int8 start value.
    const INITIAL_S8: i8;
    /// The int8 accumulation.
    fn reduce_s8(current: i8, input: i8) -> i8;
}

/// SUM: `current + in` from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sum;

impl Reducer for Sum {
    const KERNEL_F32: &'static str = "sum_f32";
    const INITIAL_F32: f32 = 0.0;

    #[inline(always)]
    fn reduce_f32(current: f32, input: f32) -> f32 {
        current + input
    }
}

/// REDUCE_MAX: `in > current ? in : current` from the type's lowest value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Max;

impl Reducer for Max {
    const KERNEL_F32: &'static str = "reduce_max_f32";
    const INITIAL_F32: f32 = f32::MIN;

    #[inline(always)]
    fn reduce_f32(current: f32, input: f32) -> f32 {
        if input > current {
            input
        } else {
            current
        }
    }
}

impl ReducerS8 for Max {
    const KERNEL_S8: &'static str = "reduce_max_s8";
    const INITIAL_S8: i8 = i8::MIN;

    #[inline(always)]
    fn reduce_s8(current: i8, input: i8) -> i8 {
        current.max(input)
    }
}

/// REDUCE_MIN: `in < current ? in : current` from the type's highest value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Min;

impl Reducer for Min {
    const KERNEL_F32: &'static str = "reduce_min_f32";
    const INITIAL_F32: f32 = f32::MAX;

    #[inline(always)]
    fn reduce_f32(current: f32, input: f32) -> f32 {
        if input < current {
            input
        } else {
            current
        }
    }
}

impl ReducerS8 for Min {
    const KERNEL_S8: &'static str = "reduce_min_s8";
    const INITIAL_S8: i8 = i8::MAX;

    #[inline(always)]
    fn reduce_s8(current: i8, input: i8) -> i8 {
        current.min(input)
    }
}

/// A float reduction. Words: [`MeanShape`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceF32<R> {
    /// Shape and axes.
    pub shape: MeanShape,
    reducer: PhantomData<R>,
}

/// An int8 reduction on raw values. Words: [`MeanShape`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceS8<R> {
    /// Shape and axes.
    pub shape: MeanShape,
    reducer: PhantomData<R>,
}

/// `sum_f32`.
pub type SumF32 = ReduceF32<Sum>;
/// `reduce_max_f32`.
pub type ReduceMaxF32 = ReduceF32<Max>;
/// `reduce_min_f32`.
pub type ReduceMinF32 = ReduceF32<Min>;
/// `reduce_max_s8`.
pub type ReduceMaxS8 = ReduceS8<Max>;
/// `reduce_min_s8`.
pub type ReduceMinS8 = ReduceS8<Min>;

impl<R: Reducer> ReduceF32<R> {
    /// The reduction of `shape`.
    pub fn new(shape: MeanShape) -> Self {
        Self {
            shape,
            reducer: PhantomData,
        }
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the reduction.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[input.len() * 4, output.len() * 4])?;
        self.shape.run_loops(
            R::INITIAL_F32,
            |acc, i| *acc = R::reduce_f32(*acc, input[i]),
            |o, value| output[o] = value,
        );
        Ok(())
    }
}

impl<R: ReducerS8> ReduceS8<R> {
    /// The reduction of `shape`.
    pub fn new(shape: MeanShape) -> Self {
        Self {
            shape,
            reducer: PhantomData,
        }
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the reduction.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        self.shape.run_loops(
            R::INITIAL_S8,
            |acc, i| *acc = R::reduce_s8(*acc, input[i]),
            |o, value| output[o] = value,
        );
        Ok(())
    }
}

impl<R: Reducer> KernelParams for ReduceF32<R> {
    const KERNEL: &'static str = R::KERNEL_F32;
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self::new(MeanShape::decode(w)?))
    }
}

impl<R: ReducerS8> KernelParams for ReduceS8<R> {
    const KERNEL: &'static str = R::KERNEL_S8;
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self::new(MeanShape::decode(w)?))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn reduces_the_axes() {
        // [2, 3], reduced along 1 and along 0.
        let rows = MeanShape::new(&[2, 3], &[1]).unwrap();
        let columns = MeanShape::new(&[2, 3], &[-2]).unwrap();
        let input = [1.0, -2.0, 4.0, f32::NAN, 0.5, -3.0];
        let mut out = [0.0f32; 2];
        SumF32::new(rows).run(&input, &mut out).unwrap();
        assert_eq!(out[0], 3.0);
        assert!(out[1].is_nan());
        ReduceMaxF32::new(rows).run(&input, &mut out).unwrap();
        // A NaN never replaces a number.
        assert_eq!(out, [4.0, 0.5]);
        let mut out = [0.0f32; 3];
        ReduceMinF32::new(columns).run(&input, &mut out).unwrap();
        assert_eq!(out, [1.0, -2.0, -3.0]);
        let mut out = [0i8; 2];
        ReduceMaxS8::new(rows)
            .run(&[-128, -7, -3, 5, 127, 0], &mut out)
            .unwrap();
        assert_eq!(out, [-3, 127]);
        ReduceMinS8::new(rows)
            .run(&[-128, -7, -3, 5, 127, 0], &mut out)
            .unwrap();
        assert_eq!(out, [-128, 0]);
        let mut words = Vec::new();
        SumF32::new(rows).encode(&mut words);
        assert_eq!(
            SumF32::decode(&mut Words::new(&words)),
            Ok(SumF32::new(rows))
        );
        assert_eq!(ReduceMaxS8::KERNEL, "reduce_max_s8");
    }
}
