//! A wrapper that keeps freed blocks by size class and hands them out again.
//!
//! # Design
//!
//! Every request is rounded up to a *size class*: multiples of 16 up to 64 bytes, then four
//! classes per power of two (`5/4`, `6/4`, `7/4` and `8/4` of it), so a class wastes under 25%
//! of the request. The inner allocator is asked for the **class size**, not the request, so
//! any cached block of a class serves any later request of that class.
//!
//! The wrapper keeps a table of `ENTRIES` entries, each holding the inner [`Range`], the size
//! the caller asked for, a state (vacant, live, cached), a 32-bit generation and a link.
//! Vacant entries form a stack; cached entries form one singly linked list per class, whose
//! heads live in a fixed array. The caller's [`Range`] has the inner block's offset, the
//! requested size, and the token `generation << 32 | entry index`.
//!
//! * **allocate** looks only at the head of the class's list: if that block's offset is a
//!   multiple of the alignment, it is reused (O(1)); otherwise a fresh block is taken from
//!   the inner allocator. If the class size does not fit in the block at all (or the inner
//!   allocator is out of memory for it), the inner allocator is asked for exactly the request
//!   instead. If the inner allocator then fails with [`AllocError::OutOfMemory`] or
//!   [`AllocError::OutOfMetadata`] while blocks are cached, the wrapper [`trim`]s the cache
//!   and retries once: that failed call may therefore have given the cached blocks back
//!   (nothing the caller holds changes). If the entry table is full of live and cached
//!   entries, one cached block is given back to free its entry.
//! * **free** checks the token (the entry is live and its generation matches, else
//!   [`AllocError::NotAllocated`]; offset and size match, else [`AllocError::Mismatch`]), bumps
//!   the generation so the freed range is stale from then on, and pushes the entry onto its
//!   class's list. The inner allocator is not told.
//! * [`trim`] gives every cached block back to the inner allocator.
//!
//! # Statistics
//!
//! `bytes_in_use`, `peak_bytes_in_use` and `allocation_count` describe the caller's live ranges
//! (requested sizes). `capacity` and `largest_free_range` are the inner allocator's: cached
//! blocks are still allocated in the inner allocator, so they are **not** free until
//! [`trim`]med. After everything is freed, `largest_free_range` equals `capacity` only once
//! the cache has been trimmed. [`Caching::cached_bytes`] reports what the cache holds.
//!
//! # Invariants
//!
//! * Every live or cached entry owns exactly one live range of the inner allocator; vacant
//!   entries own none. `cached` is the sum of the inner sizes of cached entries.
//! * Each cached entry is on exactly one class list, the one of the class it was allocated
//!   for; vacant entries are on the vacant stack or at or above `high` (never used yet).
//! * Every error is returned before anything changes, except that the out-of-memory retry
//!   described above may first trim the cache.
//!
//! [`trim`]: Caching::trim

use super::{check_request, AllocError, AllocStats, Range, RangeAllocator};

/// End of a list.
const NIL: u32 = u32::MAX;

/// Size classes: 4 of 16..=64 bytes, then 4 per power of two for (2⁶, 2⁶⁴].
const CLASSES: usize = 4 + 4 * (64 - 6);

/// The class of a request of `size` bytes (`size >= 1`), and the class's size, which is
/// `None` when it does not fit in a u64.
#[inline]
const fn class_of(size: u64) -> (usize, Option<u64>) {
    if size <= 64 {
        let steps = size.div_ceil(16);
        return ((steps - 1) as usize, Some(steps * 16));
    }
    let below = size - 1;
    // 2^k <= below < 2^(k+1), with k >= 6.
    let k = 63 - below.leading_zeros();
    let shift = k - 2;
    // The top three bits of `below`: 4..=7.
    let steps = below >> shift;
    let index = 4 + (k as usize - 6) * 4 + (steps as usize - 4);
    (index, (steps + 1).checked_mul(1 << shift))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Vacant,
    Live,
    Cached,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The block in the inner allocator.
    block: Range,
    /// The size the caller asked for (meaningful while live).
    size: u64,
    generation: u32,
    /// Next entry on the class list (cached) or the vacant stack (vacant).
    next: u32,
    class: u16,
    state: State,
}

impl Entry {
    const EMPTY: Self = Self {
        block: Range::new(0, 0, 0),
        size: 0,
        generation: 0,
        next: NIL,
        class: 0,
        state: State::Vacant,
    };
}

/// Wraps any [`RangeAllocator`] and keeps the blocks freed through it, by size class, to hand
/// them out again in O(1) without asking the inner allocator.
///
/// `ENTRIES` bounds the blocks the wrapper tracks at once, live and cached together. See the
/// [module documentation](self) for the size classes and what the statistics mean.
///
/// ```
/// use hal_core::memory::alloc::{Arena, Caching, RangeAllocator};
///
/// let mut cached = Caching::<_, 32>::new(Arena::<32>::new(1 << 16));
/// let a = cached.allocate(1000, 64)?; // the arena gives 1024 bytes (the class size)
/// cached.free(a)?;
/// assert_eq!(cached.cached_bytes(), 1024);
/// let b = cached.allocate(900, 64)?; // same class: the cached block
/// assert_eq!(b.offset, a.offset);
/// cached.free(b)?;
/// assert_eq!(cached.trim(), 1024);
/// assert_eq!(cached.stats().largest_free_range, 1 << 16);
/// # Ok::<(), hal_core::memory::alloc::AllocError>(())
/// ```
#[derive(Debug)]
pub struct Caching<A: RangeAllocator, const ENTRIES: usize> {
    inner: A,
    /// Head of each class's list of cached entries.
    heads: [u32; CLASSES],
    /// Top of the stack of recycled vacant entries.
    vacant: u32,
    /// Entries at or above `high` have never been used since the last reset.
    high: u32,
    /// Inner bytes held by cached entries.
    cached: u64,
    /// Number of cached entries.
    cached_count: u32,
    /// Requested bytes of live entries.
    in_use: u64,
    /// Number of live entries.
    live: u64,
    peak: u64,
    entries: [Entry; ENTRIES],
}

impl<A: RangeAllocator, const ENTRIES: usize> Caching<A, ENTRIES> {
    /// Entries usable at once: `ENTRIES`, capped so that an index fits below [`NIL`].
    const LIMIT: u32 = if ENTRIES < NIL as usize {
        ENTRIES as u32
    } else {
        NIL
    };

    /// Wraps `inner`, with an empty cache. `inner` should have no live ranges of its own that
    /// the wrapper will be asked about; ranges allocated before stay the caller's business.
    pub const fn new(inner: A) -> Self {
        Self {
            inner,
            heads: [NIL; CLASSES],
            vacant: NIL,
            high: 0,
            cached: 0,
            cached_count: 0,
            in_use: 0,
            live: 0,
            peak: 0,
            entries: [Entry::EMPTY; ENTRIES],
        }
    }

    /// Gives every cached block back to the inner allocator; returns the bytes given back
    /// (inner block sizes, i.e. class sizes). Time is linear in the cached blocks.
    pub fn trim(&mut self) -> u64 {
        let mut given_back = 0;
        for class in 0..CLASSES {
            let Some(head) = self.heads.get_mut(class) else {
                continue;
            };
            let mut index = core::mem::replace(head, NIL);
            while let Some(entry) = self.entries.get_mut(index as usize) {
                let next = entry.next;
                given_back += entry.block.size;
                entry.state = State::Vacant;
                entry.next = self.vacant;
                self.vacant = index;
                // The entry owned a live inner range, so this cannot fail unless the inner
                // allocator breaks its contract; the block is then lost to the cache either way.
                let _ = self.inner.free(entry.block);
                index = next;
            }
        }
        self.cached = 0;
        self.cached_count = 0;
        given_back
    }

    /// Bytes of the inner allocator held by cached (freed but not trimmed) blocks.
    #[inline]
    pub const fn cached_bytes(&self) -> u64 {
        self.cached
    }

    /// Number of cached (freed but not trimmed) blocks.
    #[inline]
    pub const fn cached_blocks(&self) -> u32 {
        self.cached_count
    }

    /// The wrapped allocator.
    #[inline]
    pub const fn inner(&self) -> &A {
        &self.inner
    }

    /// The size the inner allocator is asked for on a request of `size` bytes (its size
    /// class), or `None` when that does not fit in a u64.
    #[inline]
    pub const fn class_size(size: u64) -> Option<u64> {
        if size == 0 {
            return None;
        }
        class_of(size).1
    }

    /// Whether an entry can be had without evicting a cached block.
    #[inline]
    fn has_vacant(&self) -> bool {
        self.vacant != NIL || self.high < Self::LIMIT
    }

    /// A fresh block from the inner allocator: the class size if it fits the block, else (or
    /// if that is out of memory) exactly `size`.
    fn fresh(
        &mut self,
        size: u64,
        class_size: Option<u64>,
        alignment: u64,
    ) -> Result<Range, AllocError> {
        match class_size {
            Some(class_size) if class_size != size && class_size <= self.inner.capacity() => {
                match self.inner.allocate(class_size, alignment) {
                    Err(AllocError::OutOfMemory { .. }) => self.inner.allocate(size, alignment),
                    other => other,
                }
            }
            _ => self.inner.allocate(size, alignment),
        }
    }

    /// Takes a vacant entry, evicting one cached block if none is vacant.
    fn take_entry(&mut self) -> Option<u32> {
        if self.vacant != NIL {
            let index = self.vacant;
            self.vacant = self.entries.get(index as usize)?.next;
            return Some(index);
        }
        if self.high < Self::LIMIT {
            self.high += 1;
            return Some(self.high - 1);
        }
        // Evict the first cached block found.
        let head = self.heads.iter_mut().find(|head| **head != NIL)?;
        let index = *head;
        let entry = self.entries.get_mut(index as usize)?;
        *head = entry.next;
        entry.state = State::Vacant;
        self.cached -= entry.block.size;
        self.cached_count -= 1;
        // See `trim` for why the result is ignored.
        let _ = self.inner.free(entry.block);
        Some(index)
    }

    /// The cache-miss path of `allocate`.
    fn allocate_fresh(
        &mut self,
        size: u64,
        class: usize,
        class_size: Option<u64>,
        alignment: u64,
    ) -> Result<Range, AllocError> {
        if !self.has_vacant() && self.cached_count == 0 {
            return Err(AllocError::OutOfMetadata {
                capacity: Self::LIMIT,
            });
        }
        let block = match self.fresh(size, class_size, alignment) {
            Err(AllocError::OutOfMemory { .. } | AllocError::OutOfMetadata { .. })
                if self.cached_count > 0 =>
            {
                self.trim();
                self.fresh(size, class_size, alignment)?
            }
            other => other?,
        };
        let Some(index) = self.take_entry() else {
            // Unreachable by the check above; give the block back rather than leak it.
            let _ = self.inner.free(block);
            return Err(AllocError::OutOfMetadata {
                capacity: Self::LIMIT,
            });
        };
        let Some(entry) = self.entries.get_mut(index as usize) else {
            let _ = self.inner.free(block);
            return Err(AllocError::OutOfMetadata {
                capacity: Self::LIMIT,
            });
        };
        entry.block = block;
        entry.size = size;
        entry.class = class as u16;
        entry.state = State::Live;
        entry.next = NIL;
        let token = (u64::from(entry.generation) << 32) | u64::from(index);
        self.in_use += size;
        self.live += 1;
        self.peak = self.peak.max(self.in_use);
        Ok(Range::new(block.offset, size, token))
    }
}

impl<A: RangeAllocator, const ENTRIES: usize> RangeAllocator for Caching<A, ENTRIES> {
    #[inline]
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    #[inline]
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        check_request(size, alignment, self.inner.capacity())?;
        let (class, class_size) = class_of(size);
        if let Some(head) = self.heads.get_mut(class) {
            if let Some(entry) = self.entries.get_mut(*head as usize) {
                if entry.block.offset & (alignment - 1) == 0 && entry.block.size >= size {
                    let index = *head;
                    *head = entry.next;
                    entry.next = NIL;
                    entry.state = State::Live;
                    entry.size = size;
                    let token = (u64::from(entry.generation) << 32) | u64::from(index);
                    let offset = entry.block.offset;
                    self.cached -= entry.block.size;
                    self.cached_count -= 1;
                    self.in_use += size;
                    self.live += 1;
                    self.peak = self.peak.max(self.in_use);
                    return Ok(Range::new(offset, size, token));
                }
            }
        }
        self.allocate_fresh(size, class, class_size, alignment)
    }

    #[inline]
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let token = range.token();
        let index = (token & u64::from(u32::MAX)) as u32;
        let generation = (token >> 32) as u32;
        let not_allocated = AllocError::NotAllocated {
            offset: range.offset,
        };
        let Some(entry) = self.entries.get_mut(index as usize) else {
            return Err(not_allocated);
        };
        if entry.state != State::Live || entry.generation != generation {
            return Err(not_allocated);
        }
        if entry.block.offset != range.offset || entry.size != range.size {
            return Err(AllocError::Mismatch {
                offset: range.offset,
                size: range.size,
                expected_offset: entry.block.offset,
                expected_size: entry.size,
            });
        }
        let Some(head) = self.heads.get_mut(usize::from(entry.class)) else {
            return Err(not_allocated);
        };
        entry.state = State::Cached;
        entry.generation = entry.generation.wrapping_add(1);
        entry.next = *head;
        *head = index;
        self.cached += entry.block.size;
        self.cached_count += 1;
        self.in_use -= entry.size;
        self.live -= 1;
        Ok(())
    }

    /// Forgets every entry (live and cached) and resets the inner allocator. Ranges handed
    /// out before are stale afterwards; the peak is kept.
    fn reset(&mut self) {
        let used = (self.high as usize).min(ENTRIES);
        for entry in self.entries.iter_mut().take(used) {
            if entry.state == State::Live {
                entry.generation = entry.generation.wrapping_add(1);
            }
            entry.state = State::Vacant;
            entry.next = NIL;
        }
        self.heads = [NIL; CLASSES];
        self.vacant = NIL;
        self.high = 0;
        self.cached = 0;
        self.cached_count = 0;
        self.in_use = 0;
        self.live = 0;
        self.inner.reset();
    }

    fn stats(&self) -> AllocStats {
        AllocStats {
            capacity: self.inner.capacity(),
            bytes_in_use: self.in_use,
            peak_bytes_in_use: self.peak,
            allocation_count: self.live,
            largest_free_range: self.inner.stats().largest_free_range,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Arena;
    use super::*;

    type Cache<const N: usize> = Caching<Arena<16>, N>;

    #[test]
    fn size_classes() {
        let class = |size| class_of(size);
        assert_eq!(class(1), (0, Some(16)));
        assert_eq!(class(16), (0, Some(16)));
        assert_eq!(class(17), (1, Some(32)));
        assert_eq!(class(64), (3, Some(64)));
        assert_eq!(class(65), (4, Some(80)));
        assert_eq!(class(80), (4, Some(80)));
        assert_eq!(class(81), (5, Some(96)));
        assert_eq!(class(100), (6, Some(112)));
        assert_eq!(class(128), (7, Some(128)));
        assert_eq!(class(129), (8, Some(160)));
        assert_eq!(class(1000), (4 + 3 * 4 + 3, Some(1024)));
        assert_eq!(class(u64::MAX), (CLASSES - 1, None));
        assert_eq!(class(7 << 61), (CLASSES - 2, Some(7 << 61)));
        // Classes are monotonic and waste under 25% past 64 bytes.
        let mut last = (0, Some(16));
        for size in (1..2048).chain([(1 << 40) + 1, (1 << 62) - 1, 1 << 62]) {
            let (i, c) = class(size);
            let c = c.unwrap();
            assert!(c >= size && (size <= 64 || (c - size) * 4 < size));
            assert!(i >= last.0 && i < CLASSES);
            assert_eq!(i == last.0, Some(c) == last.1);
            last = (i, Some(c));
        }
        assert_eq!(Cache::<4>::class_size(100), Some(112));
        assert_eq!(Cache::<4>::class_size(0), None);
    }

    #[test]
    fn reuses_a_freed_block() {
        let mut c = Cache::<8>::new(Arena::new(4096));
        let a = c.allocate(100, 16).unwrap();
        assert_eq!((a.offset, a.size), (0, 100));
        assert_eq!(c.inner().stats().bytes_in_use, 112); // the class size
        c.free(a).unwrap();
        assert_eq!(c.cached_bytes(), 112);
        assert_eq!(c.stats().bytes_in_use, 0);
        let b = c.allocate(110, 8).unwrap(); // same class
        assert_eq!((b.offset, b.size), (0, 110));
        assert_eq!(c.cached_bytes(), 0);
        assert_eq!(c.inner().stats().allocation_count, 1);
        let s = c.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (110, 1));
        assert_eq!(s.peak_bytes_in_use, 110);
        // A different class gets a fresh block.
        let d = c.allocate(200, 16).unwrap();
        assert_eq!(d.offset, 112);
    }

    #[test]
    fn stale_range_after_reuse_is_rejected() {
        let mut c = Cache::<8>::new(Arena::new(4096));
        let a = c.allocate(100, 16).unwrap();
        c.free(a).unwrap();
        assert_eq!(c.free(a), Err(AllocError::NotAllocated { offset: 0 }));
        let b = c.allocate(100, 16).unwrap();
        assert_eq!(b.offset, a.offset);
        assert_eq!(c.free(a), Err(AllocError::NotAllocated { offset: 0 }));
        assert_eq!(c.stats().allocation_count, 1);
        c.free(b).unwrap();
    }

    #[test]
    fn bad_frees_leave_state_intact() {
        let mut c = Cache::<8>::new(Arena::new(4096));
        let a = c.allocate(100, 16).unwrap();
        let snapshot = |c: &Cache<8>| (c.stats(), c.cached_bytes(), c.inner().stats());
        let before = snapshot(&c);
        let forged = Range::new(a.offset, a.size, a.token() + 3);
        assert_eq!(c.free(forged), Err(AllocError::NotAllocated { offset: 0 }));
        let forged = Range::new(a.offset, a.size, u64::MAX);
        assert_eq!(c.free(forged), Err(AllocError::NotAllocated { offset: 0 }));
        let wrong = Range::new(a.offset, 112, a.token());
        assert_eq!(
            c.free(wrong),
            Err(AllocError::Mismatch {
                offset: 0,
                size: 112,
                expected_offset: 0,
                expected_size: 100
            })
        );
        assert_eq!(c.allocate(0, 16), Err(AllocError::ZeroSize));
        assert!(matches!(
            c.allocate(5000, 16),
            Err(AllocError::TooLarge { .. })
        ));
        assert_eq!(snapshot(&c), before);
        c.free(a).unwrap();
    }

    #[test]
    fn alignment_miss_allocates_fresh() {
        let mut c = Cache::<8>::new(Arena::new(4096));
        let _pad = c.allocate(16, 16).unwrap();
        let a = c.allocate(100, 16).unwrap();
        assert_eq!(a.offset, 16);
        c.free(a).unwrap();
        let b = c.allocate(100, 256).unwrap();
        assert_eq!(b.offset, 256);
        assert_eq!(c.cached_bytes(), 112); // `a`'s block stays cached
        let d = c.allocate(100, 16).unwrap();
        assert_eq!(d.offset, 16);
    }

    #[test]
    fn trim_gives_back() {
        let mut c = Cache::<8>::new(Arena::new(1024));
        let a = c.allocate(100, 16).unwrap();
        let b = c.allocate(20, 16).unwrap();
        let d = c.allocate(300, 16).unwrap();
        c.free(a).unwrap();
        c.free(d).unwrap();
        c.free(b).unwrap();
        assert_eq!(c.cached_bytes(), 112 + 32 + 320);
        assert_eq!(c.cached_blocks(), 3);
        // Cached blocks are not free until trimmed.
        assert_eq!(c.stats().largest_free_range, 1024 - 464);
        assert_eq!(c.trim(), 464);
        assert_eq!(c.cached_bytes(), 0);
        assert_eq!(c.trim(), 0);
        let s = c.stats();
        assert_eq!(s.largest_free_range, 1024);
        assert_eq!(s.capacity, 1024);
        assert_eq!((s.bytes_in_use, s.allocation_count), (0, 0));
        assert_eq!(s.peak_bytes_in_use, 420);
        assert_eq!(c.inner().stats().allocation_count, 0);
        // Entries given back are reused.
        let e = c.allocate(10, 1).unwrap();
        assert_eq!(e.offset, 0);
    }

    #[test]
    fn out_of_memory_trims_and_retries() {
        let mut c = Cache::<8>::new(Arena::new(256));
        let a = c.allocate(100, 16).unwrap(); // 112 bytes
        c.free(a).unwrap();
        let b = c.allocate(200, 16).unwrap(); // 208 bytes: fits only once `a` is trimmed
        assert_eq!(b.offset, 0);
        assert_eq!(c.cached_bytes(), 0);
        // Nothing to trim: a plain out-of-memory error, nothing changed.
        let before = (c.stats(), c.inner().stats());
        assert!(matches!(
            c.allocate(100, 16),
            Err(AllocError::OutOfMemory { .. })
        ));
        assert_eq!((c.stats(), c.inner().stats()), before);
    }

    #[test]
    fn class_too_large_falls_back_to_exact_size() {
        let mut c = Cache::<8>::new(Arena::new(1000));
        let a = c.allocate(1000, 8).unwrap(); // class 1024 exceeds the block
        assert_eq!((a.offset, a.size), (0, 1000));
        c.free(a).unwrap();
        // A bigger request of the same class cannot use that block.
        let mut d = Cache::<8>::new(Arena::new(1000));
        let x = d.allocate(900, 8).unwrap(); // class 1024 > 1000: exact
        d.free(x).unwrap();
        let y = d.allocate(950, 8).unwrap(); // cached block too small: trim and retry
        assert_eq!((y.offset, y.size), (0, 950));
        // Class fits the block but not the free space: exact size is used.
        let mut e = Cache::<8>::new(Arena::new(1000));
        e.allocate(100, 1).unwrap(); // 112
        let z = e.allocate(880, 1).unwrap(); // class 896 does not fit at 112
        assert_eq!((z.offset, z.size), (112, 880));
    }

    #[test]
    fn out_of_metadata() {
        let mut c = Cache::<2>::new(Arena::new(1024));
        let a = c.allocate(10, 1).unwrap();
        let b = c.allocate(10, 1).unwrap();
        let before = (c.stats(), c.inner().stats());
        assert_eq!(
            c.allocate(10, 1),
            Err(AllocError::OutOfMetadata { capacity: 2 })
        );
        assert_eq!((c.stats(), c.inner().stats()), before);
        // A cached entry is evicted to make room for a different class.
        c.free(b).unwrap();
        let d = c.allocate(100, 1).unwrap();
        assert_eq!(c.cached_blocks(), 0);
        assert_eq!(
            c.free(b),
            Err(AllocError::NotAllocated { offset: b.offset })
        );
        c.free(d).unwrap();
        c.free(a).unwrap();
        c.trim();
        assert_eq!(c.stats().largest_free_range, 1024);
        let mut none = Cache::<0>::new(Arena::new(1024));
        assert_eq!(
            none.allocate(1, 1),
            Err(AllocError::OutOfMetadata { capacity: 0 })
        );
    }

    #[test]
    fn reset_forgets_everything() {
        let mut c = Cache::<4>::new(Arena::new(1024));
        let a = c.allocate(100, 16).unwrap();
        let b = c.allocate(50, 16).unwrap();
        c.free(b).unwrap();
        c.reset();
        assert_eq!(c.cached_bytes(), 0);
        let s = c.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (0, 0));
        assert_eq!(s.peak_bytes_in_use, 150);
        assert_eq!(s.largest_free_range, 1024);
        assert_eq!(c.free(a), Err(AllocError::NotAllocated { offset: 0 }));
        // Same entry, same offset after the reset: the old range is still stale.
        let d = c.allocate(100, 16).unwrap();
        assert_eq!(d.offset, a.offset);
        assert_eq!(c.free(a), Err(AllocError::NotAllocated { offset: 0 }));
        c.free(d).unwrap();
    }
}
