//! The kernels of the TFLite op set: `ember-kernels`' reference arithmetic behind
//! [`Entry::Exclusive`] entries (plain slices). Each entry decodes its parameters and
//! checks its bindings' lengths against the contract `ember-kernels` declares before it
//! touches a byte; the arithmetic re-checks the slices it is given and never panics.

use crate::kernel::{elements, elements_mut, Bytes, Element, Entry, Exclusive, Kernel};
use ember_kernels::dequantize::DequantizeS8F32;
use ember_kernels::logistic::{LogisticF32, LogisticS8};
use ember_kernels::quantize::{QuantizeF32S8, RequantizeS8};
use ember_kernels::softmax::{SoftmaxF32, SoftmaxS8, SoftmaxS8S16};
use ember_kernels::tanh::{TanhF32, TanhS8};
use ember_kernels::{KernelError, KernelParams, Words};

/// Parameters decoded from a dispatch's push constants.
fn params<P: KernelParams>(wg: &Exclusive<'_, '_>) -> Result<P, KernelError> {
    P::decode(&mut Words::new(wg.constants))
}

/// Binding `index` of `bindings`, or the error that names it.
fn binding<'s, 'b>(
    bindings: &'s mut [Bytes<'b>],
    index: usize,
) -> Result<&'s mut Bytes<'b>, KernelError> {
    let bound = bindings.len() as u32;
    bindings.get_mut(index).ok_or(KernelError::MissingBinding {
        index: index as u32,
        bound,
    })
}

/// Bindings 0 (read) and 1 (written) as elements.
fn input_output<'s, I: Element, O: Element>(
    bindings: &'s mut [Bytes<'_>],
) -> Result<(&'s [I], &'s mut [O]), KernelError> {
    let [input, output, ..] = bindings else {
        return Err(KernelError::MissingBinding {
            index: 1,
            bound: bindings.len() as u32,
        });
    };
    Ok((
        elements(input.bytes(), 0)?,
        elements_mut(output.bytes_mut(1)?, 1)?,
    ))
}

/// A kernel of one input and one output: `$params`' `check` and `run` over bindings 0 and 1.
macro_rules! unary {
    ($name:ident, $entry:ident, $params:ty, $in:ty, $out:ty) => {
        fn $entry(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
            let p: $params = params(wg)?;
            p.check(&wg.lens())?;
            let (input, output) = input_output::<$in, $out>(wg.bindings)?;
            p.run(input, output)
        }

        #[doc = concat!("`", stringify!($params), "` (`ember-kernels`).")]
        pub const $name: Kernel = Kernel {
            name: <$params>::KERNEL,
            entry: Entry::Exclusive($entry),
        };
    };
}

unary!(SOFTMAX_S8, softmax_s8, SoftmaxS8, i8, i8);
unary!(SOFTMAX_S8_S16, softmax_s8_s16, SoftmaxS8S16, i8, i16);
unary!(SOFTMAX_BETA_F32, softmax_beta_f32, SoftmaxF32, f32, f32);
unary!(LOGISTIC_S8, logistic_s8, LogisticS8, i8, i8);
unary!(LOGISTIC_F32, logistic_f32, LogisticF32, f32, f32);
unary!(TANH_S8, tanh_s8, TanhS8, i8, i8);
unary!(TANH_F32, tanh_f32, TanhF32, f32, f32);
unary!(QUANTIZE_F32_S8, quantize_f32_s8, QuantizeF32S8, f32, i8);
unary!(REQUANTIZE_S8, requantize_s8, RequantizeS8, i8, i8);
unary!(
    DEQUANTIZE_S8_F32,
    dequantize_s8_f32,
    DequantizeS8F32,
    i8,
    f32
);

/// Every TFLite-op kernel, for a device that runs imported models.
pub static TFLITE: &[Kernel] = &[
    SOFTMAX_S8,
    SOFTMAX_S8_S16,
    SOFTMAX_BETA_F32,
    LOGISTIC_S8,
    LOGISTIC_F32,
    TANH_S8,
    TANH_F32,
    QUANTIZE_F32_S8,
    REQUANTIZE_S8,
    DEQUANTIZE_S8_F32,
];
