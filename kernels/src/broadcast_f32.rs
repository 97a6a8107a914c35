//! The float broadcasting binary kernels (ADD and MUL): one parameter set (the inputs'
//! [`BroadcastShape`] and the clamp range), the same words and refusals; only the
//! element's function and the kernel's name differ ([`BinaryFunctionF32`]).
//!
//! Bindings: 0 input 1, 1 input 2, 2 output (`f32` each), sized by the [`BroadcastShape`].

use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;

use hal_core::kernel::KernelError;

use crate::broadcast::BroadcastShape;
use crate::shape::{self, clamp_f32};

/// What sets one float broadcasting binary kernel apart from another.
pub trait BinaryFunctionF32 {
    /// The kernel's name.
    const KERNEL: &'static str;
    /// One output element of its two inputs, before the clamp.
    fn apply(a: f32, b: f32) -> f32;
}

/// Parameters of the float broadcasting binary kernel `F`: `clamp(F::apply(a, b))`.
/// Words: [`BroadcastShape`]'s 12, `act_min`, `act_max` (`f32` bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BroadcastF32<F> {
    /// The inputs' shapes.
    pub shape: BroadcastShape,
    /// Lower clamp.
    pub act_min: f32,
    /// Upper clamp.
    pub act_max: f32,
    function: PhantomData<F>,
}

impl<F: BinaryFunctionF32> BroadcastF32<F> {
    /// The parameters for inputs of `shape`, clamped to `[act_min, act_max]`.
    pub fn new(shape: BroadcastShape, act_min: f32, act_max: f32) -> Self {
        Self {
            shape,
            act_min,
            act_max,
            function: PhantomData,
        }
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// One output element of its two input elements: `clamp(F::apply(a, b))`.
    #[inline]
    pub fn element(&self, a: f32, b: f32) -> f32 {
        clamp_f32(F::apply(a, b), self.act_min, self.act_max)
    }

    /// Runs the kernel.
    pub fn run(
        &self,
        input1: &[f32],
        input2: &[f32],
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min, self.act_max);
        self.shape.check_and_apply(input1, input2, output, |a, b| {
            clamp_f32(F::apply(a, b), lo, hi)
        })
    }
}

impl<F: BinaryFunctionF32> KernelParams for BroadcastF32<F> {
    const KERNEL: &'static str = F::KERNEL;
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::READ_32,
        BindingUse::READ_32,
        BindingUse::WRITE_32,
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([self.act_min.to_bits(), self.act_max.to_bits()]);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = BroadcastShape::decode(w)?;
        let (act_min, act_max) = shape::act_range_f32(w)?;
        Ok(Self::new(shape, act_min, act_max))
    }
}
