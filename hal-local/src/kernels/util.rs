//! Checks and word access the built-in kernels share.

use core::ops::Range;
use core::sync::atomic::Ordering;

use crate::kernel::{F32s, KernelError, Workgroup};

/// Size in bytes of one `f32` or `u32` element.
pub(crate) const WORD: u64 = 4;

/// The first `N` push constants, or [`KernelError::MissingConstants`] naming `N`.
pub(crate) fn constants<const N: usize>(wg: &Workgroup<'_>) -> Result<[u32; N], KernelError> {
    let mut out = [0; N];
    let given = wg.constants.get(..N).ok_or(KernelError::MissingConstants {
        needed: N as u32,
        given: wg.constants.len() as u32,
    })?;
    out.copy_from_slice(given);
    Ok(out)
}

/// The element count `rows * cols` of a 4-byte element matrix, checked so that its size in
/// bytes fits both `u64` and the address space (`usize`); [`KernelError::Shape`] otherwise.
pub(crate) fn elements(rows: u32, cols: u32, what: &'static str) -> Result<usize, KernelError> {
    // A product of two `u32`s always fits a `u64`; its size in bytes may not.
    let count = u64::from(rows) * u64::from(cols);
    count
        .checked_mul(WORD)
        .and_then(|bytes| usize::try_from(bytes).ok())
        .and_then(|_| usize::try_from(count).ok())
        .ok_or(KernelError::Shape(what))
}

/// [`KernelError::BindingTooSmall`] unless binding `index` (viewed as `view`) holds at least
/// `count` whole elements.
pub(crate) fn ensure_len(
    wg: &Workgroup<'_>,
    index: usize,
    view: &F32s<'_>,
    count: usize,
) -> Result<(), KernelError> {
    if view.len() >= count {
        return Ok(());
    }
    let len = wg.binding(index).map_or(0, |b| b.len() as u64);
    Err(KernelError::BindingTooSmall {
        index: index as u32,
        len,
        // `count` fits the address space in bytes (see `elements`), or is a view's length.
        needed: (count as u64).saturating_mul(WORD),
    })
}

/// Word `i` of a 4-byte-aligned view, bit for bit (no trip through a float register, so
/// signalling NaN patterns survive); 0 past the end.
#[inline]
pub(crate) fn load_word(view: &F32s<'_>, i: usize) -> u32 {
    match view {
        F32s::Shared(w) => w.get(i).map_or(0, |a| a.load(Ordering::Relaxed)),
        F32s::ReadOnly(b) => i
            .checked_mul(4)
            .and_then(|at| b.get(at..at.checked_add(4)?))
            .map_or(0, |s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]])),
    }
}

/// Stores word `i` of a view, bit for bit; ignored past the end or on a read-only view.
#[inline]
pub(crate) fn store_word(view: &F32s<'_>, i: usize, value: u32) {
    if let F32s::Shared(w) = view {
        if let Some(a) = w.get(i) {
            a.store(value, Ordering::Relaxed);
        }
    }
}

/// This workgroup's share of `0..n` as `usize` indices (`n` is an in-memory count, so the
/// share's bounds fit `usize`).
pub(crate) fn share(wg: &Workgroup<'_>, n: usize) -> Range<usize> {
    let r = wg.share_of(n as u64);
    // Both bounds are at most `n`.
    r.start as usize..r.end as usize
}

/// ReLU as every kernel applies it: negatives (and -0.0) become +0.0, NaN stays NaN.
#[inline]
pub(crate) fn relu(x: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else {
        x
    }
}
