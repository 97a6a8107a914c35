//! The int8 activations TFLM computes on a Q4.27 input (LOGISTIC and TANH): one parameter
//! set, the same words and refusals, the same saturation outside the input radius; only the
//! fixed-point function and the kernel's name differ ([`ActFunctionS8`]).
//!
//! Bindings: 0 `input` (`len` `i8`), 1 `output` (`len` `i8`). Element-wise: `output` may
//! alias `input`.

use crate::params::{BindingUse, KernelParams, Words};
use core::marker::PhantomData;

use hal_core::kernel::KernelError;

use crate::binding_len::byte_len;
use crate::elementwise_map::{check_elementwise, map_elementwise};
use crate::quant::multiply_by_quantized_multiplier;
use crate::softmax::calculate_input_radius;

/// Integer bits of the rescaled input of int8 LOGISTIC and TANH (TFLM's
/// `kInputIntegerBits`).
pub const INPUT_INTEGER_BITS: i32 = 4;

/// The int8 input scaling TFLM's LOGISTIC and TANH Prepare compute (identically):
/// `frexp(input_scale * 2^27)` as a Q31 multiplier (rounded half away from zero, without
/// `QuantizeMultiplier`'s normalisation) and an exponent, and `CalculateInputRadius(4,
/// exponent, 31)`. Returns `(multiplier, shift, radius)`; `None` for a scale that is not
/// positive and finite or below `2^-28` (a negative shift, for which TFLM's radius is
/// undefined). Shifts above 31 (scales of 16 and more) give radius 0, where the kernel
/// never multiplies, and are stored as 31.
pub fn act_input_scaling(input_scale: f32) -> Option<(i32, i32, i32)> {
    if !(input_scale > 0.0 && input_scale.is_finite()) {
        return None;
    }
    let real = f64::from(input_scale) * f64::from(1u32 << (31 - INPUT_INTEGER_BITS));
    let (q, shift) = libm::frexp(real);
    // q has f32's 24-bit mantissa, so q * 2^31 is an integer below 2^31.
    let multiplier = libm::round(q * f64::from(1u32 << 31)) as i32;
    if shift < 0 {
        return None;
    }
    let radius = calculate_input_radius(INPUT_INTEGER_BITS, shift, 31);
    Some((multiplier, shift.min(31), radius))
}

/// What sets one int8 Q4.27 activation apart from another.
pub trait ActFunctionS8 {
    /// The kernel's name.
    const KERNEL: &'static str;
    /// The refusal's message.
    const WHAT: &'static str;
    /// The output of an input inside the saturation radius, rescaled to Q4.27.
    fn apply(input_in_q4: i32) -> i8;
}

/// Parameters of an int8 Q4.27 activation `F`.
///
/// Words: `len`, `input_zero_point`, `input_range_radius`, `input_multiplier`,
/// `input_left_shift`. `decode` refuses (with [`KernelError::Shape`] and `F::WHAT`) a zero
/// `len`, an input zero point outside `-128..=127`, a negative radius or multiplier and a
/// shift outside `-31..=31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActS8<F> {
    /// Elements.
    pub len: usize,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// Centered inputs at or beyond `±radius` saturate to -128 / 127 (TFLM's
    /// `input_range_radius`).
    pub input_range_radius: i32,
    /// `input_scale * 2^27` as a Q31 fraction (TFLM's `input_multiplier`).
    pub input_multiplier: i32,
    /// Its exponent (TFLM's `input_left_shift`, passed to `MultiplyByQuantizedMultiplier`).
    pub input_left_shift: i32,
    function: PhantomData<F>,
}

impl<F: ActFunctionS8> ActS8<F> {
    /// The parameters TFLM's Prepare computes for `len` elements from the input's
    /// quantization; refuses what [`act_input_scaling`] refuses.
    pub(crate) fn from_input_quantization(
        len: usize,
        input_scale: f32,
        input_zero_point: i32,
    ) -> Result<Self, KernelError> {
        let (input_multiplier, input_left_shift, input_range_radius) =
            act_input_scaling(input_scale).ok_or(KernelError::Shape(F::WHAT))?;
        Self {
            len,
            input_zero_point,
            input_range_radius,
            input_multiplier,
            input_left_shift,
            function: PhantomData,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        byte_len(self.len, 1, F::WHAT)?;
        let zero_point_ok = (-128..=127).contains(&self.input_zero_point);
        if !zero_point_ok
            || self.input_range_radius < 0
            || self.input_multiplier < 0
            || !(-31..=31).contains(&self.input_left_shift)
        {
            return Err(KernelError::Shape(F::WHAT));
        }
        Ok(self)
    }

    /// Bindings 0 (`input`) and 1 (`output`) each hold `len` bytes:
    /// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        check_elementwise::<i8, i8>(self.len, binding_lens)
    }

    /// Runs the kernel over the first `len` elements of each slice, after
    /// [`check`](Self::check)ing their lengths: `F::apply` on each input inside the
    /// saturation radius, -128 / 127 below and above it.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        map_elementwise(self.len, input, output, |x| {
            // Both in i8's range (validated): no overflow.
            let centered = i32::from(x) - self.input_zero_point;
            if centered <= -self.input_range_radius {
                i8::MIN
            } else if centered >= self.input_range_radius {
                i8::MAX
            } else {
                F::apply(multiply_by_quantized_multiplier(
                    centered,
                    self.input_multiplier,
                    self.input_left_shift,
                ))
            }
        })
    }
}

impl<F: ActFunctionS8> KernelParams for ActS8<F> {
    const KERNEL: &'static str = F::KERNEL;
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.len as u32,
            self.input_zero_point as u32,
            self.input_range_radius as u32,
            self.input_multiplier as u32,
            self.input_left_shift as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            len: words.usize()?,
            input_zero_point: words.i32()?,
            input_range_radius: words.i32()?,
            input_multiplier: words.i32()?,
            input_left_shift: words.i32()?,
            function: PhantomData,
        }
        .validate()
    }
}
