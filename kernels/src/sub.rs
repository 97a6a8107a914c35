//! int8 SUB with TFLite's broadcasting, as TFLM's `sub.cc` runs it
//! (`reference_ops::Sub`/`BroadcastQuantSubSlow`): both inputs rescaled to a common scale
//! after a left shift of 20 bits, the difference rescaled to the output, as int8 ADD with
//! the sum. The multipliers are TFLM's `CalculateOpDataSub`'s, whose ratios are computed in
//! `float` (ADD's in `double`). The float SUB is `arithmetic_f32`'s.
//!
//! Bindings of `sub_s8`: 0 input 1, 1 input 2, 2 output (`i8`), sized by the
//! [`BroadcastShape`].

use crate::activation::Activation;
use crate::add::{smaller_than_one, AddS8, RealMultipliers};
use crate::broadcast::BroadcastShape;
use crate::params::{BindingUse, KernelParams, Words};
use hal_core::kernel::KernelError;

/// `sub_s8`. Words: [`AddS8`]'s, which it holds: the same parameters, the difference in
/// place of the sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubS8(pub AddS8);

impl SubS8 {
    /// The parameters from the tensors' quantization (`(scale, zero_point)` each), as
    /// TFLM's `CalculateOpDataSub` computes them for int8 (`left_shift` 20; the ratios in
    /// `float`).
    pub fn from_quantization(
        shape: BroadcastShape,
        input1: (f32, i32),
        input2: (f32, i32),
        output: (f32, i32),
        activation: Activation,
    ) -> Result<Self, KernelError> {
        let left_shift = 20;
        let twice_max = 2.0 * input1.0.max(input2.0);
        let reals = RealMultipliers {
            input1: f64::from(input1.0 / twice_max),
            input2: f64::from(input2.0 / twice_max),
            // `(1 << 20) * scale` in float, as TFLM's `int * float`.
            output: f64::from(twice_max / ((1 << left_shift) as f32 * output.0)),
        };
        let act_range = activation.range_s8(output.0, output.1)?;
        AddS8::from_real_multipliers(
            shape,
            left_shift,
            reals,
            [input1.1, input2.1, output.1],
            act_range,
            smaller_than_one,
        )
        .map(Self)
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check(binding_lens)
    }

    /// Runs the subtraction.
    pub fn run(&self, input1: &[i8], input2: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        let rescales = self.0.rescales();
        self.0
            .shape
            .check_and_apply(input1, input2, output, |a, b| {
                self.0.combine_with(&rescales, a, b, i32::wrapping_sub)
            })
    }
}

impl KernelParams for SubS8 {
    const KERNEL: &'static str = "sub_s8";
    const BINDINGS: &'static [BindingUse] = AddS8::BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.0.encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        AddS8::decode(words).map(Self)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    #[test]
    fn subtracts_real_values() {
        // Scales 0.1 in and out, zero points 0: q(a) - q(b).
        let shape = BroadcastShape::new(&[3], &[1]).unwrap();
        let params =
            SubS8::from_quantization(shape, (0.1, 0), (0.1, 0), (0.1, 0), Activation::None)
                .unwrap();
        let mut out = [0i8; 3];
        params.run(&[50, -20, 127], &[30], &mut out).unwrap();
        assert_eq!(out, [20, -50, 97]);
        let mut words = Vec::new();
        params.encode(&mut words);
        assert_eq!(SubS8::decode(&mut Words::new(&words)).unwrap(), params);
    }
}
