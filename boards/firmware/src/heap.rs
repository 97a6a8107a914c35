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
        give(&HEAP, memory);
    }
}

/// Gives `heap` its one region. Only [`init`] calls it for the global heap, once.
fn give(heap: &LlffHeap, memory: &'static mut [MaybeUninit<u8>]) {
    // SAFETY: `memory` is borrowed mutably for 'static, so nothing else ever uses it, and its
    // pointer and length describe exactly that borrow; the callers give each heap a region
    // once, before its first allocation (`init` guards the global one with `DONE`).
    unsafe { heap.init(memory.as_mut_ptr() as usize, memory.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::alloc::{GlobalAlloc, Layout};

    /// Miri runs this: the region handed over is the one allocations come from, and they
    /// can be written and freed.
    #[test]
    fn a_heap_serves_from_the_region_it_was_given() {
        static TEST_HEAP: LlffHeap = LlffHeap::empty();
        // A static, not a leaked Vec: Miri's leak check stays on.
        static REGION: static_cell::ConstStaticCell<[MaybeUninit<u8>; 4096]> =
            static_cell::ConstStaticCell::new([MaybeUninit::uninit(); 4096]);
        let region: &'static mut [MaybeUninit<u8>] = REGION.take();
        let range = region.as_ptr_range();
        give(&TEST_HEAP, region);
        let layout = Layout::from_size_align(256, 16).unwrap();
        // SAFETY: a non-zero-sized layout on a heap that was given its region.
        let p = unsafe { TEST_HEAP.alloc(layout) };
        assert!(!p.is_null());
        assert!(range.contains(&(p as *const MaybeUninit<u8>)));
        assert_eq!(p as usize % 16, 0);
        // SAFETY: `p` is a live allocation of 256 bytes.
        unsafe { p.write_bytes(0xAB, 256) };
        assert!(TEST_HEAP.used() >= 256);
        // SAFETY: `p` came from this heap with this layout and is freed once.
        unsafe { TEST_HEAP.dealloc(p, layout) };
        assert_eq!(TEST_HEAP.used(), 0);
    }
}
