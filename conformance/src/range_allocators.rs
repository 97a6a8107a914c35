//! On-target checks of hal-core's device-memory range allocators
//! ([`hal_core::memory::alloc`]), with no heap: for boards too small for the conformance suite
//! (64 KiB of RAM is enough), and run on the host by `cargo test` too.
//!
//! Each check drives one allocator through deterministic pseudo-random sequences (SplitMix64,
//! a fixed seed per check) of allocations, frees, refused frees and bad requests, and checks
//! after every operation what the allocators promise ([`RangeAllocator`]'s contract):
//!
//! - every live range lies inside `0..capacity`, has the size asked for, starts at a multiple
//!   of the alignment asked for, and overlaps no other live range;
//! - the statistics match the live set: `allocation_count`, `bytes_in_use`, the peak (kept
//!   across [`reset`](RangeAllocator::reset)), and a `largest_free_range` no larger than what
//!   is not in use;
//! - a refused request or free changes nothing; bad requests (zero size, an alignment that is
//!   not a power of two, a size that overflows with its alignment, more than the block) get
//!   the error [`check_request`](hal_core::memory::alloc::check_request) gives; a full block
//!   or metadata table is [`AllocError::OutOfMemory`] or [`AllocError::OutOfMetadata`], not a
//!   panic;
//! - freeing a range twice is [`AllocError::NotAllocated`]; a stale range (freed, or from
//!   before a reset) or a forged one (another token, offset or size) is refused;
//! - once everything is freed (or after a reset) the allocator is empty again: one free range
//!   the size of the block, which can be handed out whole.
//!
//! And what each promises besides: [`Arena`]'s free space is exactly what lies above its
//! highest live range (LIFO frees give memory back at once) and its marks roll back what was
//! allocated after them (a mark from before a reset is refused); [`Slab`] gives its spans back
//! to its backing allocator when they empty; [`Caching`] hands a freed block out again to the
//! next request of its class, accounts for every block it holds in its inner allocator, and
//! [`Caching::trim`] gives back exactly what it holds.
//!
//! [`allocator_checks`] lists the checks; each panics, naming the allocator, the step and the
//! broken promise, on the first failure. [`check_range_allocator`] runs the contract part on
//! any [`RangeAllocator`] (your own, for instance).
//!
//! Memory: nothing from a heap; the crate without its `alloc` feature is only this module, so a
//! board with no global allocator can link it. The [`Tlsf`] the checks use (alone, or as the
//! backing of a [`Slab`] and of a [`Caching`]) is one `static` of about 10.3 KiB, most of it
//! the TLSF's 56 × 32 free-list heads, initialised (so in `.data`: RAM, and its image in
//! flash), lent to one check at a time; the checks wait for each other if run concurrently.
//! On the stack: the live set (64 ranges, about 2 KiB) and the allocator under test when it is
//! small (an `Arena<48>`, a `Slab` with 6 spans, a `Caching` with 24 entries). Measured on
//! `riscv32imac` under QEMU, a check's peak stack is 2.6 to 5.5 KiB at `opt-level = 3`, 4.1
//! to 7.3 KiB at `opt-level = "z"` with LTO, and 5 to 10 KiB unoptimised; the largest is the
//! slab's, because `Slab::new` builds the slab in its own frame before returning it.

use core::cell::UnsafeCell;
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};
use hal_core::memory::alloc::{
    AllocError, AllocStats, Arena, ArenaMark, Caching, Range, RangeAllocator, Slab, Tlsf,
};

/// Fails the run with a message unless `$cond` holds.
macro_rules! check {
    ($run:expr, $cond:expr, $($msg:tt)+) => {
        if !$cond {
            $run.fail(format_args!($($msg)+));
        }
    };
}

/// One allocator check, as [`allocator_checks`] lists them.
#[derive(Clone, Copy, Debug)]
pub struct AllocatorCheck {
    /// What is checked: `"tlsf"`, `"arena"`, `"slab_over_tlsf"`, `"caching_over_tlsf"`,
    /// `"caching_over_arena"`.
    pub name: &'static str,
    /// Runs the check: returns when every promise held, panics (with the allocator, the step
    /// and what broke) on the first one that did not.
    pub run: fn(),
}

/// Every allocator check, in a fixed order. None needs a heap; see the
/// [module documentation](self) for their memory.
pub fn allocator_checks() -> &'static [AllocatorCheck] {
    &CHECKS
}

static CHECKS: [AllocatorCheck; 5] = [
    AllocatorCheck {
        name: "tlsf",
        run: check_tlsf,
    },
    AllocatorCheck {
        name: "arena",
        run: check_arena,
    },
    AllocatorCheck {
        name: "slab_over_tlsf",
        run: check_slab_over_tlsf,
    },
    AllocatorCheck {
        name: "caching_over_tlsf",
        run: check_caching_over_tlsf,
    },
    AllocatorCheck {
        name: "caching_over_arena",
        run: check_caching_over_arena,
    },
];

/// Runs the contract checks (not the allocator-specific ones) on `allocator`, which must be
/// empty, with the sequence `seed` picks; `name` is what a failure message calls it. Freed
/// memory must come back: once everything is freed, `largest_free_range` must equal the
/// capacity (a caching allocator must give its cache back on its own first). Panics on the
/// first broken promise; afterwards the allocator is empty (or reset).
pub fn check_range_allocator<A: RangeAllocator>(name: &'static str, allocator: &mut A, seed: u64) {
    Run::new(name, &mut Borrowed(allocator), seed).standard(|_| {});
}

// ---------------------------------------------------------------------------------------------
// The checks.

/// Block of the shared [`Tlsf`]: offsets only, so its size costs nothing.
const TLSF_CAPACITY: u64 = 1 << 20;
/// Nodes of the shared [`Tlsf`]: fewer than the live set needs at its fullest, so sequences
/// run out of metadata as well as of memory.
const TLSF_NODES: usize = 64;
/// Block of the stand-alone [`Arena`].
const ARENA_CAPACITY: u64 = 256 << 10;
/// Records of the stand-alone [`Arena`] (fewer than the live set, for the same reason).
const ARENA_RECORDS: usize = 48;
/// Spans of the [`Slab`] (and its pass-through allocations): few, so it runs out of them.
const SLAB_SPANS: usize = 6;
/// Size classes of the [`Slab`]: spans of 1 KiB to 256 KiB.
const SLAB_CLASSES: [u64; 5] = [16, 64, 256, 1024, 4096];
/// Entries of the [`Caching`] wrappers.
const CACHING_ENTRIES: usize = 24;
/// Block of the [`Arena`] inside a [`Caching`].
const CACHED_ARENA_CAPACITY: u64 = 64 << 10;
/// Records of the [`Arena`] inside a [`Caching`].
const CACHED_ARENA_RECORDS: usize = 16;

fn check_tlsf() {
    with_shared_tlsf(|tlsf| {
        Run::new("tlsf", &mut Borrowed(tlsf), 0x7151_F000_0000_0001).standard(|_| {});
    });
}

fn check_arena() {
    let mut arena = Arena::<ARENA_RECORDS>::new(ARENA_CAPACITY);
    let mut run = Run::new("arena", &mut arena, 0xA2E4_A000_0000_0002);
    // A mark, the allocation counter when it was taken, and the resets before it.
    let mut mark: Option<(ArenaMark, u32, u32)> = None;
    run.standard(|run| {
        if let Some((m, order, resets)) = mark {
            if resets != run.resets {
                run.stale_mark(m);
            } else if run.rng.below(2) == 0 {
                // Keep the mark: it may be used again.
                run.roll_back(m, order);
                return;
            }
        }
        mark = Some((run.alloc.mark(), run.next_order, run.resets));
    });
}

fn check_slab_over_tlsf() {
    with_shared_tlsf(|tlsf| {
        // Used where it lies, inside the `Result`: moving it out would copy it on the stack.
        let mut made = Slab::<_, SLAB_SPANS>::new(Borrowed(tlsf), &SLAB_CLASSES);
        let slab = match &mut made {
            Ok(slab) => slab,
            Err(e) => panic!("allocator check `slab_over_tlsf`: Slab::new: {e:?}"),
        };
        Run::new("slab_over_tlsf", slab, 0x51AB_0000_0000_0003).standard(|_| {});
    });
}

fn check_caching_over_tlsf() {
    with_shared_tlsf(|tlsf| {
        let mut caching = Caching::<_, CACHING_ENTRIES>::new(Borrowed(tlsf));
        Run::new("caching_over_tlsf", &mut caching, 0xCAC4_0000_0000_0004).standard(caching_extra);
    });
}

fn check_caching_over_arena() {
    let mut caching = Caching::<_, CACHING_ENTRIES>::new(Arena::<CACHED_ARENA_RECORDS>::new(
        CACHED_ARENA_CAPACITY,
    ));
    Run::new("caching_over_arena", &mut caching, 0xCAC4_A000_0000_0005).standard(caching_extra);
}

/// What a [`Caching`] promises besides the contract: a freed block is handed out again to the
/// next request of its class, and [`Caching::trim`] gives back what the cache holds.
fn caching_extra<A: RangeAllocator>(run: &mut Run<'_, Caching<A, CACHING_ENTRIES>>) {
    if run.len > 0 && run.rng.below(3) != 0 {
        let i = run.rng.below(run.len as u64) as usize;
        let freed = run.live[i];
        run.free_at(i);
        run.op = "allocate the size just freed";
        let again = run.allocate(freed.size, 1);
        match again {
            Ok(r) => {
                check!(
                    run,
                    r.offset == freed.offset,
                    "{} bytes freed at {} came back at {}, not from the cache",
                    freed.size,
                    freed.offset,
                    r.offset
                );
                check!(
                    run,
                    r.token() != freed.token(),
                    "the reused block kept the freed range's token {:#x}",
                    freed.token()
                );
            }
            Err(e) => run.fail(format_args!(
                "a request of the size just freed ({}) was refused with {e:?}",
                freed.size
            )),
        }
    } else {
        run.op = "trim";
        let (bytes, blocks) = (run.alloc.cached_bytes(), run.alloc.cached_blocks());
        let inner_before = run.alloc.inner().stats();
        let given_back = run.alloc.trim();
        let inner_after = run.alloc.inner().stats();
        check!(
            run,
            given_back == bytes,
            "trim gave back {given_back} bytes, but {bytes} were cached"
        );
        check!(
            run,
            (run.alloc.cached_bytes(), run.alloc.cached_blocks()) == (0, 0),
            "the cache still holds {} bytes in {} blocks after trim",
            run.alloc.cached_bytes(),
            run.alloc.cached_blocks()
        );
        check!(
            run,
            inner_after.allocation_count + u64::from(blocks) == inner_before.allocation_count,
            "trim of {blocks} blocks took the inner allocator from {} to {} allocations",
            inner_before.allocation_count,
            inner_after.allocation_count
        );
        run.verify();
    }
}

// ---------------------------------------------------------------------------------------------
// The shared Tlsf.

/// The [`Tlsf`] the checks share, with the flag that lends it to one at a time.
struct SharedTlsf {
    busy: AtomicBool,
    tlsf: UnsafeCell<Tlsf<TLSF_NODES>>,
}

// SAFETY: the `Tlsf` is reached only through `with_shared_tlsf`, which hands out a `&mut` to it
// only after swinging `busy` from false to true, and clears `busy` only once that reference is
// out of use: at most one reference to it exists at any time, whatever thread holds it.
unsafe impl Sync for SharedTlsf {}

/// A `static` rather than a local: its tables are about 10.3 KiB, too much for a small stack.
static SHARED_TLSF: SharedTlsf = SharedTlsf {
    busy: AtomicBool::new(false),
    tlsf: UnsafeCell::new(Tlsf::new(TLSF_CAPACITY)),
};

/// Runs `f` on the shared [`Tlsf`], reset first; waits while another check has it.
fn with_shared_tlsf<R>(f: impl FnOnce(&mut Tlsf<TLSF_NODES>) -> R) -> R {
    while SHARED_TLSF
        .busy
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    /// Clears the flag when dropped: after `f` returns, or when a failed check unwinds.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            SHARED_TLSF.busy.store(false, Ordering::Release);
        }
    }
    let _release = Release;
    // SAFETY: this thread swung `busy` from false to true, so no other reference to the Tlsf
    // exists; `_release` clears it only after `f` has returned or unwound, when the reference
    // handed to `f` (which cannot escape: `f` gets it for a local lifetime) is gone.
    let tlsf = unsafe { &mut *SHARED_TLSF.tlsf.get() };
    tlsf.reset();
    f(tlsf)
}

/// A [`RangeAllocator`] that forwards to one it borrows: lets a `Slab` or a `Caching` built on
/// the stack use the shared `Tlsf` as its backing.
struct Borrowed<'a, A>(&'a mut A);

impl<A: RangeAllocator> RangeAllocator for Borrowed<'_, A> {
    fn capacity(&self) -> u64 {
        self.0.capacity()
    }
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        self.0.allocate(size, alignment)
    }
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        self.0.free(range)
    }
    fn reset(&mut self) {
        self.0.reset();
    }
    fn stats(&self) -> AllocStats {
        self.0.stats()
    }
}

// ---------------------------------------------------------------------------------------------
// What differs between allocators.

/// A promise broken by an allocator-specific invariant: what, the value found, the value due.
struct Problem {
    what: &'static str,
    got: u64,
    want: u64,
}

/// Compares `got` with `want`.
fn expect(what: &'static str, got: u64, want: u64) -> Result<(), Problem> {
    if got == want {
        Ok(())
    } else {
        Err(Problem { what, got, want })
    }
}

/// Compares `got` with the bound `at_least`.
fn expect_at_least(what: &'static str, got: u64, at_least: u64) -> Result<(), Problem> {
    if got >= at_least {
        Ok(())
    } else {
        Err(Problem {
            what,
            got,
            want: at_least,
        })
    }
}

/// What a [`Run`] needs to know about the allocator under test beyond the contract.
trait Subject: RangeAllocator {
    /// Whether a refused allocation leaves every statistic exactly as it was. A [`Caching`]
    /// may trim its cache before refusing, which changes its `largest_free_range`.
    const STRICT_ON_REFUSAL: bool = true;

    /// Invariants of this allocator, checked after every step with the live set.
    fn check(&self, _live: &[Range]) -> Result<(), Problem> {
        Ok(())
    }

    /// Called once everything is freed: gives back what the allocator keeps for reuse, and
    /// checks it is empty inside.
    fn settle(&mut self) -> Result<(), Problem> {
        Ok(())
    }
}

impl<A: RangeAllocator> Subject for Borrowed<'_, A> {}

impl<const N: usize> Subject for Arena<N> {
    fn check(&self, live: &[Range]) -> Result<(), Problem> {
        // Freed records on top are popped at once: free space is what lies above the highest
        // live range.
        let top = live.iter().map(Range::end).max().unwrap_or(0);
        expect(
            "largest free range (the block above the highest live range)",
            self.stats().largest_free_range,
            self.capacity() - top,
        )
    }
}

impl<A: RangeAllocator, const S: usize> Subject for Slab<A, S> {
    fn check(&self, live: &[Range]) -> Result<(), Problem> {
        expect_at_least(
            "bytes the backing allocator has handed to the slab",
            self.backing().stats().bytes_in_use,
            live.iter().map(|r| r.size).sum(),
        )
    }

    fn settle(&mut self) -> Result<(), Problem> {
        let backing = self.backing().stats();
        expect(
            "backing allocations left once every slot is freed",
            backing.allocation_count,
            0,
        )?;
        expect(
            "backing bytes in use once every slot is freed",
            backing.bytes_in_use,
            0,
        )
    }
}

impl<A: RangeAllocator, const E: usize> Subject for Caching<A, E> {
    const STRICT_ON_REFUSAL: bool = false;

    fn check(&self, live: &[Range]) -> Result<(), Problem> {
        // Every live or cached block is one live range of the inner allocator.
        let inner = self.inner().stats();
        expect(
            "inner allocations (live plus cached blocks)",
            inner.allocation_count,
            live.len() as u64 + u64::from(self.cached_blocks()),
        )?;
        expect_at_least(
            "inner bytes in use (at least the live sizes plus the cached blocks)",
            inner.bytes_in_use,
            live.iter().map(|r| r.size).sum::<u64>() + self.cached_bytes(),
        )
    }

    fn settle(&mut self) -> Result<(), Problem> {
        let cached = self.cached_bytes();
        expect("bytes trim gave back", self.trim(), cached)?;
        expect("cached bytes after trim", self.cached_bytes(), 0)?;
        expect(
            "inner allocations once everything is freed and trimmed",
            self.inner().stats().allocation_count,
            0,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The driver.

/// Most live ranges a run keeps at once.
const MAX_LIVE: usize = 64;
/// Dead ranges (freed, or live before a reset) remembered to free again.
const DEAD: usize = 8;
/// Rounds of a standard run: random steps, then a phase (exhaust and drain, reset, drain).
const ROUNDS: u32 = 6;
/// Random steps per round.
const STEPS: u32 = 300;

/// A tiny seeded generator (SplitMix64): deterministic sequences with no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform-ish in `lo..=hi`.
    fn within(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// Which refusal a free must get.
#[derive(Clone, Copy)]
enum Refusal {
    /// [`AllocError::NotAllocated`] at the range's offset (a double free).
    NotAllocated,
    /// [`AllocError::NotAllocated`] or [`AllocError::Mismatch`] (stale or forged).
    Any,
}

/// One allocator under test and the live set it must agree with.
struct Run<'a, A> {
    name: &'static str,
    alloc: &'a mut A,
    capacity: u64,
    rng: SplitMix64,
    /// The live ranges, `live[..len]`.
    live: [Range; MAX_LIVE],
    /// When each live range was allocated (a counter of successful allocations).
    order: [u32; MAX_LIVE],
    len: usize,
    next_order: u32,
    /// Ranges that were live once and are not now.
    dead: [Range; DEAD],
    dead_len: usize,
    dead_next: usize,
    /// The peak the allocator must report.
    peak: u64,
    /// Resets so far.
    resets: u32,
    step: u32,
    op: &'static str,
}

impl<'a, A: Subject> Run<'a, A> {
    fn new(name: &'static str, alloc: &'a mut A, seed: u64) -> Self {
        let stats = alloc.stats();
        let run = Self {
            name,
            capacity: alloc.capacity(),
            alloc,
            rng: SplitMix64(seed),
            live: [Range::new(0, 0, 0); MAX_LIVE],
            order: [0; MAX_LIVE],
            len: 0,
            next_order: 0,
            dead: [Range::new(0, 0, 0); DEAD],
            dead_len: 0,
            dead_next: 0,
            peak: stats.peak_bytes_in_use,
            resets: 0,
            step: 0,
            op: "start",
        };
        check!(
            run,
            (stats.allocation_count, stats.bytes_in_use) == (0, 0),
            "the allocator must start empty: {stats:?}"
        );
        check!(
            run,
            stats.largest_free_range == run.capacity,
            "an empty allocator's largest free range is {}, not its capacity {}",
            stats.largest_free_range,
            run.capacity
        );
        run
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn fail(&self, what: fmt::Arguments<'_>) -> ! {
        panic!(
            "allocator check `{}`, step {} ({}), {} live ranges: {}",
            self.name, self.step, self.op, self.len, what
        )
    }

    /// The standard run: [`ROUNDS`] rounds of [`STEPS`] random steps (of which about 1 in 25
    /// is `extra`, the allocator's own), each round ending in a phase: exhaust the block and
    /// free everything, reset, or free everything.
    fn standard(&mut self, mut extra: impl FnMut(&mut Self)) {
        for round in 0..ROUNDS {
            for _ in 0..STEPS {
                self.step += 1;
                if self.rng.below(25) == 0 {
                    self.op = "extra";
                    extra(self);
                } else {
                    self.random_step();
                }
            }
            self.step += 1;
            match round % 3 {
                0 => {
                    self.drain();
                    self.exhaust_bytes();
                    self.drain();
                    self.exhaust_metadata();
                    self.drain();
                }
                1 => self.reset(),
                _ => self.drain(),
            }
        }
        self.step += 1;
        self.drain();
    }

    /// One random operation.
    fn random_step(&mut self) {
        let roll = self.rng.below(100);
        if roll < 50 && self.len < MAX_LIVE {
            self.op = "allocate";
            let (size, alignment) = self.random_request();
            let _ = self.allocate(size, alignment);
        } else if roll < 85 && self.len > 0 {
            let i = self.rng.below(self.len as u64) as usize;
            self.free_at(i);
        } else if roll < 90 {
            self.forged_free();
        } else if roll < 95 {
            if self.dead_len > 0 {
                self.op = "free a dead range";
                let d = self.dead[self.rng.below(self.dead_len as u64) as usize];
                self.refuse(d, Refusal::Any);
            }
        } else {
            self.bad_request();
        }
    }

    /// A request: mostly small, some medium, a few large; alignments up to 4 KiB, a few to
    /// 1 MiB.
    fn random_request(&mut self) -> (u64, u64) {
        let cap = self.capacity;
        let size = match self.rng.below(100) {
            0..60 => self.rng.within(1, 256),
            60..85 => self.rng.within(257, 4096),
            85..97 => self.rng.within(4097, (cap / 32).max(4097)),
            _ => self.rng.within(cap / 32, cap / 4),
        };
        let alignment = if self.rng.below(100) < 3 {
            1 << self.rng.within(13, 20)
        } else {
            1 << self.rng.below(13)
        };
        (size.min(cap), alignment)
    }

    /// Every check of the live set against the allocator.
    fn verify(&mut self) {
        let stats = self.alloc.stats();
        let live = &self.live[..self.len];
        let in_use: u64 = live.iter().map(|r| r.size).sum();
        self.peak = self.peak.max(in_use);
        check!(
            self,
            stats.capacity == self.capacity && self.alloc.capacity() == self.capacity,
            "capacity changed from {} to {} (stats say {})",
            self.capacity,
            self.alloc.capacity(),
            stats.capacity
        );
        check!(
            self,
            stats.allocation_count == live.len() as u64,
            "allocation_count is {}, but {} ranges are live",
            stats.allocation_count,
            live.len()
        );
        check!(
            self,
            stats.bytes_in_use == in_use,
            "bytes_in_use is {}, but the live ranges add up to {in_use}",
            stats.bytes_in_use
        );
        check!(
            self,
            stats.peak_bytes_in_use == self.peak,
            "peak_bytes_in_use is {}, but bytes in use have peaked at {}",
            stats.peak_bytes_in_use,
            self.peak
        );
        check!(
            self,
            stats.largest_free_range <= self.capacity - in_use,
            "largest_free_range {} is more than the {} bytes not in use",
            stats.largest_free_range,
            self.capacity - in_use
        );
        for (i, r) in live.iter().enumerate() {
            check!(
                self,
                r.offset
                    .checked_add(r.size)
                    .is_some_and(|end| end <= self.capacity),
                "live range {r:?} does not lie inside the block of {} bytes",
                self.capacity
            );
            if let Some(other) = live[i + 1..].iter().find(|o| o.overlaps(r)) {
                self.fail(format_args!("live ranges overlap: {r:?} and {other:?}"));
            }
        }
        if let Err(p) = self.alloc.check(live) {
            self.fail(format_args!("{}: {}, want {}", p.what, p.got, p.want));
        }
    }

    /// Whether a refused call left the allocator as it was.
    fn unchanged(before: &AllocStats, after: &AllocStats) -> bool {
        if A::STRICT_ON_REFUSAL {
            before == after
        } else {
            (
                before.capacity,
                before.bytes_in_use,
                before.peak_bytes_in_use,
                before.allocation_count,
            ) == (
                after.capacity,
                after.bytes_in_use,
                after.peak_bytes_in_use,
                after.allocation_count,
            )
        }
    }

    /// Allocates (the caller has checked the live set has room) and checks the answer: a
    /// range as asked, or an exhaustion error that changed nothing.
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        let before = self.alloc.stats();
        let result = self.alloc.allocate(size, alignment);
        match result {
            Ok(r) => {
                check!(
                    self,
                    r.size == size,
                    "asked for {size} bytes, got a range of {}",
                    r.size
                );
                check!(
                    self,
                    r.offset % alignment == 0,
                    "asked for alignment {alignment}, got offset {}",
                    r.offset
                );
                check!(
                    self,
                    self.len < MAX_LIVE,
                    "the check's live set is full (a bug in the check)"
                );
                self.live[self.len] = r;
                self.order[self.len] = self.next_order;
                self.len += 1;
                self.next_order += 1;
            }
            Err(e) => {
                check!(
                    self,
                    matches!(
                        e,
                        AllocError::OutOfMemory { .. } | AllocError::OutOfMetadata { .. }
                    ),
                    "a valid request ({size} bytes aligned to {alignment}) was refused with {e:?}"
                );
                let after = self.alloc.stats();
                check!(
                    self,
                    Self::unchanged(&before, &after),
                    "a refused request ({e:?}) changed the statistics from {before:?} to {after:?}"
                );
            }
        }
        self.verify();
        result
    }

    /// Frees live range `i`, which must succeed, then frees it again, which must not.
    fn free_at(&mut self, i: usize) {
        self.op = "free";
        let r = self.live[i];
        if let Err(e) = self.alloc.free(r) {
            self.fail(format_args!("freeing live range {r:?} was refused: {e:?}"));
        }
        self.forget(i);
        self.verify();
        self.op = "double free";
        self.refuse(r, Refusal::NotAllocated);
    }

    /// Drops live range `i` from the live set and remembers it as dead.
    fn forget(&mut self, i: usize) {
        let r = self.live[i];
        self.len -= 1;
        self.live[i] = self.live[self.len];
        self.order[i] = self.order[self.len];
        self.dead[self.dead_next] = r;
        self.dead_next = (self.dead_next + 1) % DEAD;
        self.dead_len = (self.dead_len + 1).min(DEAD);
    }

    /// Frees `r`, which is not live (unless it equals a live range: then nothing is done),
    /// and checks the refusal changed nothing.
    fn refuse(&mut self, r: Range, refusal: Refusal) {
        if self.live[..self.len].contains(&r) {
            return;
        }
        let before = self.alloc.stats();
        let result = self.alloc.free(r);
        let after = self.alloc.stats();
        let fitting = match (refusal, result) {
            (Refusal::NotAllocated, Err(AllocError::NotAllocated { offset })) => offset == r.offset,
            (Refusal::Any, Err(AllocError::NotAllocated { .. } | AllocError::Mismatch { .. })) => {
                true
            }
            _ => false,
        };
        check!(
            self,
            fitting,
            "freeing {r:?}, which is not live, gave {result:?}"
        );
        check!(
            self,
            before == after,
            "a refused free changed the statistics from {before:?} to {after:?}"
        );
        self.verify();
    }

    /// Frees a forged range: a live or dead one with another token, offset or size, or one
    /// made up.
    fn forged_free(&mut self) {
        self.op = "free a forged range";
        let base = if self.len > 0 {
            self.live[self.rng.below(self.len as u64) as usize]
        } else if self.dead_len > 0 {
            self.dead[self.rng.below(self.dead_len as u64) as usize]
        } else {
            Range::new(0, 16, 0)
        };
        let (offset, size, token) = (base.offset, base.size, base.token());
        let forged = match self.rng.below(7) {
            0 => Range::new(offset, size, token ^ (1 << 32)),
            1 => Range::new(offset, size, token.wrapping_add(1)),
            2 => Range::new(offset, size, u64::MAX),
            3 => Range::new(offset.wrapping_add(16), size, token),
            4 => Range::new(offset, size + 1, token),
            5 => Range::new(offset, size.saturating_sub(1).max(1), token),
            _ => Range::new(
                self.rng.below(self.capacity),
                self.rng.within(1, 4096),
                self.rng.next(),
            ),
        };
        self.refuse(forged, Refusal::Any);
    }

    /// A request that is wrong on its face: refused with the error `check_request` gives, and
    /// nothing changes.
    fn bad_request(&mut self) {
        self.op = "bad request";
        let cap = self.capacity;
        let (size, alignment, want) = match self.rng.below(5) {
            0 => (0, 16, AllocError::ZeroSize),
            1 => (16, 0, AllocError::InvalidAlignment { alignment: 0 }),
            2 => {
                let alignment = (1 << self.rng.within(1, 12)) + 1 + 2 * self.rng.below(3);
                (16, alignment, AllocError::InvalidAlignment { alignment })
            }
            3 => {
                let size = u64::MAX - self.rng.below(16);
                let alignment = 1 << self.rng.within(5, 20);
                (
                    size,
                    alignment,
                    AllocError::SizeOverflow { size, alignment },
                )
            }
            _ => {
                let size = cap + 1 + self.rng.below(1 << 20);
                (
                    size,
                    1,
                    AllocError::TooLarge {
                        size,
                        capacity: cap,
                    },
                )
            }
        };
        let before = self.alloc.stats();
        let result = self.alloc.allocate(size, alignment);
        let after = self.alloc.stats();
        check!(
            self,
            result == Err(want),
            "a request of {size} bytes aligned to {alignment} gave {result:?}, want Err({want:?})"
        );
        check!(
            self,
            before == after,
            "a bad request changed the statistics from {before:?} to {after:?}"
        );
        self.verify();
    }

    /// Allocates large ranges (1/16 to 1/4 of the block) into an empty allocator until the
    /// block is full: the end must be an exhaustion error, not a panic, and come before 17
    /// ranges are live.
    fn exhaust_bytes(&mut self) {
        self.op = "exhaust the block";
        let (lo, hi) = ((self.capacity / 16).max(1), (self.capacity / 4).max(1));
        let mut refused = false;
        while self.len <= 16 {
            let size = self.rng.within(lo, hi);
            if self.allocate(size, 16).is_err() {
                refused = true;
                break;
            }
        }
        check!(
            self,
            refused,
            "{} ranges of at least {lo} bytes fit in a block of {}",
            self.len,
            self.capacity
        );
    }

    /// Allocates small ranges until the allocator refuses (out of metadata, for most) or the
    /// live set is full.
    fn exhaust_metadata(&mut self) {
        self.op = "exhaust the metadata";
        while self.len < MAX_LIVE {
            let size = self.rng.within(1, 64);
            let alignment = 1 << self.rng.below(5);
            if self.allocate(size, alignment).is_err() {
                break;
            }
        }
    }

    /// Frees every live range in random order; then the allocator must be empty, its block
    /// one free range that can be handed out whole.
    fn drain(&mut self) {
        self.op = "free everything";
        while self.len > 0 {
            let i = self.rng.below(self.len as u64) as usize;
            self.free_at(i);
        }
        self.op = "empty";
        self.expect_empty();
        self.op = "allocate the whole block";
        let whole = self.capacity;
        match self.allocate(whole, 1) {
            Ok(r) => {
                check!(
                    self,
                    r.offset == 0,
                    "the whole block was handed out at {}",
                    r.offset
                );
                self.free_at(self.len - 1);
            }
            Err(e) => self.fail(format_args!(
                "the empty allocator refused the whole block ({whole} bytes): {e:?}"
            )),
        }
        self.op = "empty again";
        self.expect_empty();
    }

    /// Everything is freed: the allocator settles (gives back what it keeps for reuse), and
    /// then its largest free range is the whole block.
    fn expect_empty(&mut self) {
        check!(
            self,
            self.len == 0,
            "expect_empty with live ranges (a bug in the check)"
        );
        if let Err(p) = self.alloc.settle() {
            self.fail(format_args!("{}: {}, want {}", p.what, p.got, p.want));
        }
        self.verify();
        let largest = self.alloc.stats().largest_free_range;
        check!(
            self,
            largest == self.capacity,
            "everything is freed, but the largest free range is {largest} of {}",
            self.capacity
        );
    }

    /// Resets the allocator: it is empty at once, its peak kept; ranges from before are stale
    /// even once their places are handed out again.
    fn reset(&mut self) {
        self.op = "reset";
        while self.len > 0 {
            self.forget(self.len - 1);
        }
        self.alloc.reset();
        self.resets += 1;
        self.verify();
        let largest = self.alloc.stats().largest_free_range;
        check!(
            self,
            largest == self.capacity,
            "after a reset the largest free range is {largest} of {}",
            self.capacity
        );
        self.op = "allocate after a reset";
        for _ in 0..8 {
            let size = self.rng.within(1, 512);
            let _ = self.allocate(size, 16);
        }
        self.op = "free a range from before the reset";
        for i in 0..self.dead_len {
            self.refuse(self.dead[i], Refusal::Any);
        }
    }
}

impl<const N: usize> Run<'_, Arena<N>> {
    /// Rolls back to `mark`, taken when the allocation counter was `order`: every range
    /// allocated since is freed (and refused from then on), the others stay live.
    fn roll_back(&mut self, mark: ArenaMark, order: u32) {
        self.op = "reset_to a mark";
        if let Err(e) = self.alloc.reset_to(mark) {
            self.fail(format_args!("reset_to a live mark was refused: {e:?}"));
        }
        let mut i = 0;
        while i < self.len {
            if self.order[i] >= order {
                self.forget(i);
            } else {
                i += 1;
            }
        }
        self.verify();
        self.op = "free a range rolled back";
        for i in 0..self.dead_len {
            self.refuse(self.dead[i], Refusal::Any);
        }
    }

    /// A mark taken before a reset is refused, and changes nothing.
    fn stale_mark(&mut self, mark: ArenaMark) {
        self.op = "reset_to a stale mark";
        let before = self.alloc.stats();
        let result = self.alloc.reset_to(mark);
        check!(
            self,
            matches!(result, Err(AllocError::InvalidConfig(_))),
            "reset_to a mark from before a reset gave {result:?}"
        );
        let after = self.alloc.stats();
        check!(
            self,
            before == after,
            "a refused reset_to changed the statistics from {before:?} to {after:?}"
        );
        self.verify();
    }
}
