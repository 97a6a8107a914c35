//! The stack's peak depth, painted and read back: the measure's other half, the same for
//! every engine's firmware.
//!
//! [`paint`] fills the unused stack below the caller's frame with a pattern; [`peak`] finds
//! the deepest word since overwritten. The stack's low end is the linker's symbol on each
//! target: cortex-m-rt's `_stack_end`, riscv-rt's `__estack`, and `__stack_bottom` in the
//! AArch64 board's `link.x`. Painting stops [`PAINT_LIMIT`] bytes below the caller, so a
//! board with a huge stack is not painted whole.

/// The deepest the paint reaches below the caller's frame (a board's whole stack region may
/// be most of its memory).
pub const PAINT_LIMIT: usize = 1024 * 1024;

const PATTERN: u32 = 0x5AC3_F00D;

unsafe extern "C" {
    #[cfg_attr(target_arch = "arm", link_name = "_stack_end")]
    #[cfg_attr(target_arch = "riscv32", link_name = "__estack")]
    #[cfg_attr(target_arch = "aarch64", link_name = "__stack_bottom")]
    static STACK_BOTTOM: u32;
}

/// The stack's low end.
fn bottom() -> usize {
    core::ptr::addr_of!(STACK_BOTTOM) as usize
}

/// The paint's range: word-aligned, from the stack's low end (or [`PAINT_LIMIT`] below
/// `top`) up to `top`.
fn range(top: usize) -> (usize, usize) {
    let low = bottom().max(top.saturating_sub(PAINT_LIMIT));
    (low.next_multiple_of(4), top & !3)
}

/// Paints the stack below this call's frame; returns the top of the painted range, which
/// [`peak`] takes.
#[inline(never)]
pub fn paint() -> usize {
    let marker = 0u32;
    // Leave this frame and the loop's own room alone.
    let top = core::ptr::addr_of!(marker) as usize - 256;
    let (low, high) = range(top);
    let mut at = low;
    while at < high {
        // SAFETY: `low..high` lies between the linker's stack bottom and 256 bytes below this
        // function's frame: stack memory no live frame uses (the firmware runs with every
        // interrupt off, so no handler's frame can be below this one), and no static (the
        // linker puts every static below the stack's bottom). Volatile writes of whole
        // aligned words.
        unsafe { (at as *mut u32).write_volatile(PATTERN) };
        at += 4;
    }
    high
}

/// Bytes of stack used below `top` (what [`paint`] returned) since it painted; `None` if the
/// lowest painted word was overwritten too: the stack may have run past its low end into
/// the statics, or past [`PAINT_LIMIT`].
pub fn peak(top: usize) -> Option<usize> {
    let (low, high) = range(top);
    let mut at = low;
    // SAFETY: as in `paint`: aligned words of the stack region, read without creating
    // references; words above the deepest frame are only compared with the pattern.
    while at < high && unsafe { (at as *const u32).read_volatile() } == PATTERN {
        at += 4;
    }
    (at > low).then_some(high - at)
}
