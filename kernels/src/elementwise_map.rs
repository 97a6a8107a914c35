//! The binding check and loop of the one-input element-wise kernels: binding 0 holds `len`
//! input elements, binding 1 `len` output elements, and output `i` depends on input `i`
//! alone (so the output may alias the input where both types match).

use core::mem::size_of;

use hal_core::kernel::KernelError;

use crate::binding_len::{require, slice_bytes};

/// Bindings 0 and 1 (byte lengths in `binding_lens`) hold `len` elements of `I` and of `O`:
/// [`KernelError::MissingBinding`] or [`KernelError::BindingTooSmall`] otherwise, binding 0
/// checked first. `len * size_of::<O>()` must not overflow (the parameters' validation).
pub(crate) fn check_elementwise<I, O>(
    len: usize,
    binding_lens: &[usize],
) -> Result<(), KernelError> {
    require(binding_lens, 0, len * size_of::<I>())?;
    require(binding_lens, 1, len * size_of::<O>())
}

/// Writes `f(input[i])` to `output[i]` for the first `len` elements, after
/// [`check_elementwise`] of the slices' lengths.
#[inline(always)]
pub(crate) fn map_elementwise<I: Copy, O>(
    len: usize,
    input: &[I],
    output: &mut [O],
    mut f: impl FnMut(I) -> O,
) -> Result<(), KernelError> {
    check_elementwise::<I, O>(len, &[slice_bytes(input), slice_bytes(output)])?;
    for (&x, y) in input.iter().zip(output.iter_mut()).take(len) {
        *y = f(x);
    }
    Ok(())
}
