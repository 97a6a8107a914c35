//! The `embedded-alloc` heap: the global allocator on boards that choose one.

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, Ordering};
use embedded_alloc::LlffHeap;

#[cfg_attr(not(test), global_allocator)]
static HEAP: LlffHeap = LlffHeap::empty();

/// Hands `memory` to the global allocator. Call it once, before anything allocates; later
/// calls are ignored (the heap keeps its first region).
pub fn init(memory: &'static mut [MaybeUninit<u8>]) {
    static DONE: AtomicBool = AtomicBool::new(false);
    if !DONE.swap(true, Ordering::AcqRel) {
        ember_heap::give(&HEAP, memory);
    }
}
