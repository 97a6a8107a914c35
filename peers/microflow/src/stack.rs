//! Peak stack, by painting, as Ember's runner measures it (boards/firmware/src/stack.rs):
//! [`paint`] fills the free stack below its caller's frame (from cortex-m-rt's
//! `_stack_end`, the end of the statics, up to 256 bytes below the caller) with a pattern;
//! [`peak`] finds the deepest word since overwritten and counts from the painted range's top.
//! So the figure is the stack the runner's calls (inferences, comparisons, the measure) used
//! below the runner's own frame.

use core::ptr::addr_of;

const PATTERN: u32 = 0x5AC3_F00D;

extern "C" {
    /// cortex-m-rt: the lowest address the stack may grow to (the end of the statics).
    static _stack_end: u32;
}

/// The paint's word-aligned range: from the stack's low end up to `top`.
fn range(top: usize) -> (usize, usize) {
    // Only the linker symbol's address is taken, never its contents.
    let low = addr_of!(_stack_end) as usize;
    ((low + 3) & !3, top & !3)
}

/// Paints the stack below this call's frame; returns the top of the painted range, which
/// [`peak`] takes.
#[inline(never)]
pub fn paint() -> usize {
    let marker = 0u32;
    // Leave this frame and the loop's own room alone.
    let top = core::hint::black_box(addr_of!(marker)) as usize - 256;
    let (low, high) = range(top);
    let mut at = low;
    while at < high {
        // SAFETY: `low..high` lies between the end of the statics and 256 bytes below this
        // function's frame: stack memory no live frame uses. Aligned, volatile word writes.
        unsafe { (at as *mut u32).write_volatile(PATTERN) };
        at += 4;
    }
    high
}

/// Bytes of stack used below `top` (what [`paint`] returned) since it painted.
pub fn peak(top: usize) -> usize {
    let (low, high) = range(top);
    let mut at = low;
    // SAFETY: aligned words of the stack region between the statics and `top`, read
    // without creating references.
    while at < high && unsafe { (at as *const u32).read_volatile() } == PATTERN {
        at += 4;
    }
    high - at
}
