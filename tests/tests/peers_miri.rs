//! The peer adapters' `unsafe` glue (raw regions handed to rlsf, talc and
//! linked_list_allocator), exercised on a small block so that Miri can run it:
//! `cargo +nightly miri test -p ember-tests --test peers_miri` (part of `cargo xtask test`).

use ember_tests::adapter::BenchAllocator;
use ember_tests::peers::{LinkedListHeap, OffsetAlloc, RlsfTlsf, TalcHeap};

fn exercise<A: BenchAllocator>(mut alloc: A) {
    let capacity = alloc.capacity();
    let mut live = Vec::new();
    for (i, size) in [24u64, 256, 1000, 64, 4096, 16].into_iter().enumerate() {
        let align = 8u64 << (i % 4);
        let h = alloc.alloc(size, align).expect("small allocation fits");
        let offset = alloc.offset(&h);
        assert_eq!(offset % align, 0, "{}: aligned", alloc.name());
        assert!(offset + size <= capacity, "{}: in bounds", alloc.name());
        live.push(h);
    }
    // Free every other one, then the rest, reallocating in between.
    for h in live.iter().step_by(2) {
        alloc.free(*h);
    }
    let again = alloc.alloc(512, 64).expect("reuse after free");
    alloc.free(again);
    for h in live.iter().skip(1).step_by(2) {
        alloc.free(*h);
    }
}

const BLOCK: u64 = 16 << 10;

/// Room for 64 live allocations: the bench's 2^17 nodes take Miri minutes to initialise.
#[test]
fn offset_allocator_adapter() {
    exercise(OffsetAlloc::with_max_allocs(BLOCK, 64));
}

#[test]
fn rlsf_adapter() {
    exercise(RlsfTlsf::new(BLOCK));
}

#[test]
fn talc_adapter() {
    exercise(TalcHeap::new(BLOCK));
}

#[test]
fn linked_list_allocator_adapter() {
    exercise(LinkedListHeap::new(BLOCK));
}
