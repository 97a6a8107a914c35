//! Float element-wise kernels whose only parameter is the element count (LOGISTIC and
//! TANH): one parameter set, the same words and refusals; only the function and the
//! kernel's name differ ([`UnaryFunctionF32`]).
//!
//! Bindings: 0 `input` (`len` `f32`), 1 `output` (`len` `f32`). Element-wise: `output` may
//! alias `input`.

use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;

use hal_core::kernel::KernelError;

use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};

/// What sets one float element-wise function apart from another.
pub trait UnaryFunctionF32 {
    /// The kernel's name.
    const KERNEL: &'static str;
    /// The refusal's message.
    const WHAT: &'static str;
    /// The output of one input.
    fn apply(x: f32) -> f32;
}

/// Parameters of the float element-wise function `F`.
///
/// Words: `len`. `decode` refuses (with [`KernelError::Shape`] and `F::WHAT`) a zero length
/// or a byte size overflowing `usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnaryF32<F> {
    /// Elements.
    pub len: usize,
    function: PhantomData<F>,
}

impl<F: UnaryFunctionF32> UnaryF32<F> {
    /// The parameters for `len` elements.
    pub fn prepare(len: usize) -> Result<Self, KernelError> {
        byte_len(len, 4, F::WHAT)?;
        Ok(Self {
            len,
            function: PhantomData,
        })
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `4 * len` bytes:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<f32, f32>(self.len, binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        map_elementwise(self.len, input, output, F::apply)
    }
}

impl<F: UnaryFunctionF32> KernelParams for UnaryF32<F> {
    const KERNEL: &'static str = F::KERNEL;
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.len as u32]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::prepare(words.usize()?)
    }
}
