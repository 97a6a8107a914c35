//! The allocators under test, and the `Arena` micro-benchmark.
//!
//! Ember's `Arena` is a bump allocator (no individual frees), so it is not run on the traces;
//! it gets its own micro-benchmark ([`arena_alloc_ns`]).

use std::hint::black_box;
use std::time::Instant;

use hal_core::memory::alloc::{first_levels, Arena, Caching, RangeAllocator, Slab, Tlsf};

use crate::adapter::{BenchAllocator, Ember};
use crate::peers::{LinkedListHeap, OffsetAlloc, RlsfTlsf, TalcHeap};

/// Metadata nodes of every Ember `Tlsf` (32 bytes each): at least `2 × live + 2` for
/// the 3,000 live blocks of `random` and the ~2,000 of `efficiency` at 16 MiB.
pub const TLSF_NODES: usize = 8192;
/// Span table of the Ember `Slab`. It holds the spans (64 slots each) *and* the requests
/// larger than the largest class that pass through to the backing `Tlsf`, so it must cover
/// `random`'s ~1,000 live large blocks plus its spans.
pub const SLAB_SPANS: usize = 4096;
/// Entries of the Ember `Caching` wrapper. Its table holds live *and* cached blocks, so it
/// must cover the live count of every trace (3,000 in `random`) with room to cache.
pub const CACHE_ENTRIES: usize = 8192;
/// Size classes of the Ember `Slab`; larger requests pass through to its `Tlsf`.
pub const SLAB_CLASSES: [u64; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// First-level size classes of every Ember `Tlsf`: as many as the largest block of the
/// traces needs (19 for 64 MiB, 2.4 KiB of list heads; a 64-bit target's default is 56).
pub const TLSF_FIRST_LEVELS: usize = first_levels(crate::traces::TIMED_BLOCK_SIZE);

/// The Ember `Tlsf` under test.
pub type EmberTlsf = Tlsf<TLSF_NODES, TLSF_FIRST_LEVELS>;
/// The Ember `Slab` under test, over a `Tlsf`.
pub type EmberSlab = Slab<EmberTlsf, SLAB_SPANS>;
/// The Ember `Caching` wrapper under test, over a `Tlsf`.
pub type EmberCaching = Caching<EmberTlsf, CACHE_ENTRIES>;

/// Names of the peers, for the "vs. fastest peer" ratio.
pub const PEERS: [&str; 4] = ["offset-allocator", "rlsf", "talc", "linked_list_allocator"];

/// Something run on every allocator in turn ([`visit_all`]).
pub trait Visitor {
    /// Called once per allocator, with a fresh, empty allocator over `capacity` bytes.
    fn visit<A: BenchAllocator>(&mut self, alloc: A);
}

/// Builds each allocator under test over a block of `capacity` bytes, one at a time, and
/// hands it to `visitor` (each is dropped before the next is built).
///
/// Order: Ember `Slab<Tlsf>`, `Tlsf`, `Caching<Tlsf>`, then the peers.
pub fn visit_all(capacity: u64, visitor: &mut impl Visitor) {
    let slab = EmberSlab::new(EmberTlsf::new(capacity), &SLAB_CLASSES).expect("slab config");
    visitor.visit(Ember::new("ember::Slab<Tlsf>", Box::new(slab)));
    visitor.visit(Ember::new(
        "ember::Tlsf",
        Box::new(EmberTlsf::new(capacity)),
    ));
    visitor.visit(Ember::new(
        "ember::Caching<Tlsf>",
        Box::new(EmberCaching::new(EmberTlsf::new(capacity))),
    ));
    visitor.visit(OffsetAlloc::new(capacity));
    visitor.visit(RlsfTlsf::new(capacity));
    visitor.visit(TalcHeap::new(capacity));
    visitor.visit(LinkedListHeap::new(capacity));
}

/// Allocations per `Arena` round.
pub const ARENA_ALLOCS_PER_ROUND: u32 = 1024;

/// ns per `Arena::allocate`: `rounds` rounds of [`ARENA_ALLOCS_PER_ROUND`] allocations of 64
/// bytes aligned to 16 followed by a `reset` (the reset is included, amortised). Returns the
/// median over rounds, after a warm-up of `rounds / 10` rounds.
///
/// With `runtime_args` false, size and alignment are constants at the call site, as in most
/// callers (`arena.allocate(64, 16)`), so the compiler folds the request checks; with it true
/// they go through [`black_box`] and every check runs. The offset of each range is passed
/// through `black_box` either way.
pub fn arena_alloc_ns(rounds: u32, runtime_args: bool) -> f64 {
    // Every allocation takes a record on the arena's stack until the reset.
    let mut arena = Box::new(Arena::<{ ARENA_ALLOCS_PER_ROUND as usize }>::new(1 << 20));
    let warmup = rounds / 10;
    let mut per_round = Vec::with_capacity(rounds as usize);
    for round in 0..rounds + warmup {
        let t = Instant::now();
        if runtime_args {
            for _ in 0..ARENA_ALLOCS_PER_ROUND {
                let r = arena.allocate(black_box(64), black_box(16));
                black_box(r.expect("arena allocate").offset);
            }
        } else {
            for _ in 0..ARENA_ALLOCS_PER_ROUND {
                let r = arena.allocate(64, 16);
                black_box(r.expect("arena allocate").offset);
            }
        }
        arena.reset();
        let ns = t.elapsed().as_nanos() as f64;
        if round >= warmup {
            per_round.push(ns / f64::from(ARENA_ALLOCS_PER_ROUND));
        }
    }
    crate::harness::percentile(&mut per_round, 50.0)
}
