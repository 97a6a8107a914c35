//! The parameters shared by the conversions between float and an 8- or 16-bit tensor's
//! per-tensor affine quantization (`real = scale * (q - zero_point)`): an element count, the
//! integer side's scale and zero point. QUANTIZE and DEQUANTIZE differ only in direction,
//! int8, uint8 and int16 in their zero points' range ([`AffineConversion`]).
//!
//! Bindings: 0 `input` (`len` elements), 1 `output` (`len` elements).

use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;

use hal_core::kernel::KernelError;

use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};
use crate::quantize::positive;

/// One direction and integer type of an affine conversion.
pub trait AffineConversion {
    /// The kernel's name.
    const KERNEL: &'static str;
    /// The refusal's message.
    const WHAT: &'static str;
    /// The input's element type.
    type Input: Copy;
    /// The output's element type.
    type Output;
    /// The zero points the integer side's type holds (int8's unless said).
    const ZERO_POINTS: (i32, i32) = (-128, 127);
    /// One element, with the integer side's `scale` and `zero_point`.
    fn convert(x: Self::Input, scale: f32, zero_point: i32) -> Self::Output;
}

/// Parameters of the affine conversion `C`.
///
/// Words: `len`, `scale` (its `f32` bits), `zero_point`. `decode` refuses (with
/// [`KernelError::Shape`] and `C::WHAT`) a zero or overflowing length, a scale that is not
/// positive and finite and a zero point outside `C::ZERO_POINTS`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Affine<C> {
    /// Elements.
    pub len: usize,
    /// The integer tensor's scale.
    pub scale: f32,
    /// The integer tensor's zero point.
    pub zero_point: i32,
    conversion: PhantomData<C>,
}

impl<C: AffineConversion> Affine<C> {
    /// The parameters TFLM's Prepare keeps for `len` elements: the integer tensor's
    /// (per-tensor) scale and zero point (QUANTIZE's output, DEQUANTIZE's input).
    pub fn prepare(len: usize, scale: f32, zero_point: i32) -> Result<Self, KernelError> {
        Self {
            len,
            scale,
            zero_point,
            conversion: PhantomData,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 4, C::WHAT)?;
        let (lowest, highest) = C::ZERO_POINTS;
        if !(positive(self.scale) && (lowest..=highest).contains(&self.zero_point)) {
            return Err(KernelError::Shape(C::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `len` elements of their type:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<C::Input, C::Output>(self.len, binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths.
    pub fn run(&self, input: &[C::Input], output: &mut [C::Output]) -> Result<(), KernelError> {
        let (scale, zero_point) = (self.scale, self.zero_point);
        map_elementwise(self.len, input, output, |x| {
            C::convert(x, scale, zero_point)
        })
    }
}

impl<C: AffineConversion> KernelParams for Affine<C> {
    const KERNEL: &'static str = C::KERNEL;
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::read(core::mem::size_of::<C::Input>() as u32),
        BindingUse::write(core::mem::size_of::<C::Output>() as u32),
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.scale.to_bits(),
            self.zero_point as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self::prepare(words.usize()?, words.f32()?, words.i32()?)
    }
}
