//! The `embedded-alloc` heap: the global allocator on boards that choose one.

use core::mem::MaybeUninit;
use embedded_alloc::LlffHeap;

#[global_allocator]
static HEAP: LlffHeap = LlffHeap::empty();

/// Hands `memory` to the global allocator. Call it once, before anything allocates; later
/// calls are ignored (the heap keeps its first region).
pub fn init(memory: &'static mut [MaybeUninit<u8>]) {
    static DONE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, core::sync::atomic::Ordering::AcqRel) {
        return;
    }
    // SAFETY: `memory` is borrowed mutably for 'static, so nothing else ever uses it; `DONE`
    // makes this the one and only `init`, before any allocation (the board calls it first).
    unsafe { HEAP.init(memory.as_mut_ptr() as usize, memory.len()) }
}

/// Bytes in use and free in the heap.
pub fn usage() -> (usize, usize) {
    (HEAP.used(), HEAP.free())
}
