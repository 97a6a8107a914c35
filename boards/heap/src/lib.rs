//! Hands a board's static region to an `embedded-alloc` heap. The firmware's global heap
//! (`ember-firmware`'s `heap` module) is given its memory through [`give`], once.
//!
//! A crate of its own so that Miri checks the hand-over without building the firmware's
//! build script (the importer and the digits trainer).

#![no_std]

use core::mem::MaybeUninit;
use embedded_alloc::LlffHeap;

/// Gives `heap` its one region. Call it once per heap, before the heap's first allocation.
pub fn give(heap: &LlffHeap, memory: &'static mut [MaybeUninit<u8>]) {
    // SAFETY: `memory` is borrowed mutably for 'static, so nothing else ever uses it, and its
    // pointer and length describe exactly that borrow; the callers give each heap a region
    // once, before its first allocation (the firmware's `heap::init` guards the global one).
    unsafe { heap.init(memory.as_mut_ptr() as usize, memory.len()) }
}

#[cfg(test)]
mod tests {
    extern crate std;

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
