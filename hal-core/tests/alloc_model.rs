//! Model-based tests of every built-in [`RangeAllocator`].
//!
//! Long random sequences of allocate / free / reset (and bad input) run against each allocator
//! and against a reference model that only remembers the live ranges. After every step:
//! live ranges never overlap, lie inside the block and are aligned as asked; the allocator's
//! statistics equal the model's; a refused request or free changes nothing. At the end,
//! freeing everything gives back one free range covering the whole block.

use hal_core::memory::alloc::{
    first_levels, AllocError, AllocStats, Arena, Caching, Range, RangeAllocator, Slab, Tlsf,
};
use proptest::prelude::*;

/// One step of a sequence.
#[derive(Debug, Clone)]
enum Op {
    /// Allocate `size` bytes aligned to `1 << align_log2`.
    Alloc { size: u64, align_log2: u32 },
    /// Free the live range picked by this index (modulo the live count).
    Free(usize),
    /// Free a range that was freed before (must be refused).
    FreeStale(usize),
    /// Free a live range with its size or offset altered (must be refused).
    FreeAltered(usize, bool),
    /// Free everything at once.
    Reset,
    /// A request that is invalid on its face (must be refused).
    Bad(u8),
}

fn op(max_size: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1..=max_size, 0u32..=12).prop_map(|(size, align_log2)| Op::Alloc { size, align_log2 }),
        1 => (1..=16u64, 13u32..=16).prop_map(|(size, align_log2)| Op::Alloc { size, align_log2 }),
        4 => any::<usize>().prop_map(Op::Free),
        1 => any::<usize>().prop_map(Op::FreeStale),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, b)| Op::FreeAltered(i, b)),
        1 => Just(Op::Reset),
        1 => any::<u8>().prop_map(Op::Bad),
    ]
}

/// The reference model: just the live ranges and the peak.
/// Ops whose allocations mostly ask for a `Slab` class size (16, 48, 256, 1024) exactly,
/// at small alignments, with some other sizes and a pass-through size mixed in.
fn class_size_ops() -> impl Strategy<Value = Vec<Op>> {
    let size = prop_oneof![
        8 => prop::sample::select(vec![16u64, 48, 256, 1024]),
        2 => prop::sample::select(vec![1u64, 17, 200, 1000]),
        1 => Just(5000u64),
    ];
    let op = prop_oneof![
        6 => (size, 0u32..=4).prop_map(|(size, align_log2)| Op::Alloc { size, align_log2 }),
        5 => any::<usize>().prop_map(Op::Free),
        1 => any::<usize>().prop_map(Op::FreeStale),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, b)| Op::FreeAltered(i, b)),
        1 => Just(Op::Reset),
    ];
    let len = if cfg!(miri) { 40 } else { 400 };
    prop::collection::vec(op, 1..len)
}

#[derive(Default)]
struct Model {
    live: Vec<Range>,
    freed: Vec<Range>,
    peak: u64,
}

impl Model {
    fn in_use(&self) -> u64 {
        self.live.iter().map(|r| r.size).sum()
    }
}

fn assert_matches(stats: &AllocStats, model: &Model, capacity: u64) {
    assert_eq!(stats.capacity, capacity, "capacity");
    assert_eq!(stats.bytes_in_use, model.in_use(), "bytes in use");
    assert_eq!(
        stats.allocation_count,
        model.live.len() as u64,
        "allocation count"
    );
    assert_eq!(stats.peak_bytes_in_use, model.peak, "peak");
    assert!(
        stats.largest_free_range <= capacity,
        "largest free range in bounds"
    );
}

/// Runs `ops` against `alloc`, checking the contract after every step, then frees everything
/// and hands the allocator to `drain` (which may trim) before the final whole-block check.
fn run<A: RangeAllocator>(alloc: &mut A, ops: &[Op], drain: impl FnOnce(&mut A)) {
    let capacity = alloc.capacity();
    let mut model = Model::default();
    for op in ops {
        let before = alloc.stats();
        match *op {
            Op::Alloc { size, align_log2 } => {
                let alignment = 1u64 << align_log2;
                match alloc.allocate(size, alignment) {
                    Ok(r) => {
                        assert_eq!(r.size, size);
                        assert_eq!(r.offset % alignment, 0, "{r:?} aligned to {alignment}");
                        assert!(r.end() <= capacity, "{r:?} inside {capacity}");
                        for other in &model.live {
                            assert!(!r.overlaps(other), "{r:?} overlaps {other:?}");
                        }
                        model.live.push(r);
                        model.peak = model.peak.max(model.in_use());
                    }
                    Err(AllocError::OutOfMemory { .. } | AllocError::OutOfMetadata { .. }) => {
                        // Refusals are allowed when full; an empty allocator must serve a
                        // modest request.
                        assert!(
                            !(model.live.is_empty() && size <= capacity / 4 && alignment <= 16),
                            "empty allocator refused {size} bytes"
                        );
                        // A refusal changes nothing the caller owns; a caching allocator
                        // may have trimmed its cache first, which only frees memory.
                        let after = alloc.stats();
                        assert!(after.largest_free_range >= before.largest_free_range);
                        let after = AllocStats {
                            largest_free_range: before.largest_free_range,
                            ..after
                        };
                        assert_eq!(after, before, "a refusal changes nothing");
                    }
                    Err(e) => panic!("unexpected error for {size}/{alignment}: {e}"),
                }
            }
            Op::Free(i) if !model.live.is_empty() => {
                let r = model.live.swap_remove(i % model.live.len());
                alloc.free(r).unwrap_or_else(|e| panic!("free {r:?}: {e}"));
                model.freed.push(r);
            }
            Op::FreeStale(i) if !model.freed.is_empty() => {
                let r = model.freed[i % model.freed.len()];
                assert!(alloc.free(r).is_err(), "stale {r:?} accepted");
                assert_eq!(alloc.stats(), before, "a refused free changes nothing");
            }
            Op::FreeAltered(i, bump_size) if !model.live.is_empty() => {
                let r = model.live[i % model.live.len()];
                let altered = if bump_size {
                    Range::new(r.offset, r.size + 1, r.token())
                } else {
                    Range::new(r.offset + 1, r.size, r.token())
                };
                assert!(alloc.free(altered).is_err(), "altered {altered:?} accepted");
                assert_eq!(alloc.stats(), before, "a refused free changes nothing");
            }
            Op::Reset => {
                alloc.reset();
                model.freed.append(&mut model.live);
            }
            Op::Bad(kind) => {
                let (size, alignment, expected) = match kind % 4 {
                    0 => (0, 8, AllocError::ZeroSize),
                    1 => (64, 24, AllocError::InvalidAlignment { alignment: 24 }),
                    2 => (
                        u64::MAX - 3,
                        16,
                        AllocError::SizeOverflow {
                            size: u64::MAX - 3,
                            alignment: 16,
                        },
                    ),
                    _ => (
                        capacity + 1,
                        1,
                        AllocError::TooLarge {
                            size: capacity + 1,
                            capacity,
                        },
                    ),
                };
                assert_eq!(alloc.allocate(size, alignment), Err(expected));
                assert_eq!(alloc.stats(), before, "bad input changes nothing");
            }
            _ => {}
        }
        assert_matches(&alloc.stats(), &model, capacity);
    }
    for r in model.live.drain(..) {
        alloc
            .free(r)
            .unwrap_or_else(|e| panic!("final free {r:?}: {e}"));
    }
    drain(alloc);
    let stats = alloc.stats();
    assert_eq!(stats.bytes_in_use, 0);
    assert_eq!(stats.allocation_count, 0);
    assert_eq!(stats.largest_free_range, capacity, "whole block free again");
    // And the whole block can be handed out as one range.
    let all = alloc
        .allocate(capacity, 1)
        .expect("whole block after freeing everything");
    assert_eq!(all.offset, 0);
    alloc.free(all).expect("free the whole block");
}

const CAPACITY: u64 = 1 << 20;

fn config() -> ProptestConfig {
    ProptestConfig {
        // Miri is ~1000x slower: a few short sequences still walk every path.
        cases: if cfg!(miri) { 2 } else { 192 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn ops(max_size: u64) -> impl Strategy<Value = Vec<Op>> {
    let len = if cfg!(miri) { 40 } else { 600 };
    proptest::collection::vec(op(max_size), 1..len)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tlsf_keeps_the_contract(ops in ops(64 << 10)) {
        let mut tlsf = Tlsf::<256>::new(CAPACITY);
        run(&mut tlsf, &ops, |_| {});
    }

    #[test]
    fn tlsf_with_few_nodes_keeps_the_contract(ops in ops(16 << 10)) {
        let mut tlsf = Tlsf::<9>::new(CAPACITY);
        run(&mut tlsf, &ops, |_| {});
    }

    #[test]
    fn tlsf_with_bounded_first_levels_keeps_the_contract(ops in ops(64 << 10)) {
        // 13 first levels (1.6 KiB of list heads) for 1 MiB, instead of all 56 (7 KiB).
        let mut tlsf = Tlsf::<256, { first_levels(CAPACITY) }>::new(CAPACITY);
        run(&mut tlsf, &ops, |_| {});
    }

    #[test]
    fn arena_keeps_the_contract(ops in ops(64 << 10)) {
        let mut arena = Arena::<64>::new(CAPACITY);
        run(&mut arena, &ops, |_| {});
    }

    #[test]
    fn slab_keeps_the_contract(ops in ops(8 << 10)) {
        let backing = Tlsf::<256>::new(CAPACITY);
        let mut slab = Slab::<_, 16>::new(backing, &[16, 48, 256, 1024]).expect("classes");
        run(&mut slab, &ops, |_| {});
    }

    #[test]
    fn slab_at_its_class_sizes_keeps_the_contract(ops in class_size_ops()) {
        // Mostly the class sizes themselves: the held-slot fast path, mixed with others.
        let backing = Tlsf::<256>::new(CAPACITY);
        let mut slab = Slab::<_, 16>::new(backing, &[16, 48, 256, 1024]).expect("classes");
        run(&mut slab, &ops, |_| {});
    }

    #[test]
    fn caching_keeps_the_contract(ops in ops(64 << 10)) {
        let mut caching = Caching::<_, 128>::new(Tlsf::<256>::new(CAPACITY));
        run(&mut caching, &ops, |c| { c.trim(); });
    }
}

/// Capacities that are not a multiple of anything the allocators like still behave.
#[test]
fn odd_capacities_are_handled() {
    for capacity in [1u64, 15, 17, 4097, (1 << 40) + 3] {
        let mut tlsf = Tlsf::<16>::new(capacity);
        let mut arena = Arena::<16>::new(capacity);
        for alloc in [&mut tlsf as &mut dyn RangeAllocator, &mut arena] {
            assert_eq!(alloc.capacity(), capacity);
            if let Ok(r) = alloc.allocate(1, 1) {
                assert!(r.end() <= capacity);
                alloc.free(r).expect("free");
            }
            assert_eq!(
                alloc.allocate(capacity + 1, 1),
                Err(AllocError::TooLarge {
                    size: capacity + 1,
                    capacity
                })
            );
        }
    }
}

/// Device memory is larger than 4 GiB: offsets past u32 work.
#[test]
fn offsets_beyond_four_gib() {
    let mut tlsf = Tlsf::<16>::new(64 << 30);
    let a = tlsf.allocate(5 << 30, 1 << 16).expect("5 GiB");
    let b = tlsf.allocate(1 << 20, 4096).expect("1 MiB after it");
    assert!(b.offset >= 5 << 30 || b.end() <= a.offset);
    assert_eq!(b.offset % 4096, 0);
    tlsf.free(a).expect("free a");
    tlsf.free(b).expect("free b");
    assert_eq!(tlsf.stats().largest_free_range, 64 << 30);
}
