//! Word access and work splitting the built-in kernels share (their checks are their
//! contracts, in `ember_kernels::builtin`).

use core::ops::Range;
use core::sync::atomic::Ordering;

use crate::kernel::{F32s, Workgroup};

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
