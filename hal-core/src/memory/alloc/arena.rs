//! A bump allocator of offsets with LIFO rollback, marks and reset.
//!
//! # Design
//!
//! [`Arena`] hands out ranges by bumping `top` (aligned up) through a block it never touches.
//! Each allocation pushes a *record* `(offset, size, seq)` onto a fixed stack of `RECORDS`
//! records, so records are sorted by offset and by allocation order. `seq` is a wrapping
//! per-arena allocation counter; a range's token is `seq << 32 | record index`, which makes
//! [`free`](RangeAllocator::free) O(1) and recognises a stale range whose record slot has been
//! reused since (its `seq` differs). The arena keeps the next token itself as one counter,
//! `seq << 32 | len`, so an allocation bumps both with one add; it writes the three words of
//! its record, the counter, `top` and the bytes in use, and nothing else.
//!
//! * Freeing the **top** record pops it, then pops every already-freed record beneath it, and
//!   rolls `top` back to the end of the new top record (or 0): LIFO frees give memory back at
//!   once. The pops are amortised O(1): each record is pushed once and popped once.
//! * Freeing any **other** record only marks it freed (a tombstone: its size set to 0, which
//!   no live record has). Its bytes stop counting
//!   in [`AllocStats::bytes_in_use`] at once, but its space is reclaimed only when everything
//!   above it has been freed too.
//! * [`Arena::mark`] / [`Arena::reset_to`] free, in one call, every range allocated after the
//!   mark was taken. [`reset`](RangeAllocator::reset) frees everything and makes every range
//!   and mark taken before it stale.
//!
//! # Invariants
//!
//! * `len <= RECORDS`; `records[..len]` is sorted by offset, non-overlapping, and its `seq`s
//!   increase (wrapping) with the index.
//! * `top` is the end of `records[len - 1]`, or 0 when `len == 0`; `top <= capacity`.
//! * `records[len - 1]`, when it exists, is live: freed records at the top are always popped.
//! * `in_use` is the sum of the sizes of the live records; the peak is `max(peak, in_use)`
//!   (folded into `peak` whenever `in_use` falls). The live count is not kept:
//!   [`stats`](RangeAllocator::stats) counts the live records.
//! * Every error returns before any field is written.
//!
//! Stale-range detection relies on the 32-bit `seq`: a stale range is mistaken for a live one
//! only if its record slot was reused exactly a multiple of 2³² allocations later. Likewise a
//! mark is judged by the allocations made since it was taken, which must be fewer than 2³².

use super::{check_request, AllocError, AllocStats, Range, RangeAllocator};
use core::ops::{Deref, DerefMut};

/// One entry of an arena's record stack: an allocation, live or freed.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    offset: u64,
    /// The size asked for; 0 once freed (no live record has size 0).
    size: u64,
    seq: u32,
}

impl Record {
    /// An unused record, all zero bytes (records at or above `len` are never read, so a
    /// `static` arena is in `.bss`).
    pub const EMPTY: Self = Self {
        offset: 0,
        size: 0,
        seq: 0,
    };

    #[inline]
    const fn freed(&self) -> bool {
        self.size == 0
    }

    #[inline]
    const fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// Bump allocator of offsets inside a block of `capacity` bytes, with room for `RECORDS`
/// allocations on its record stack at a time (live ones, plus freed ones not yet reclaimed).
///
/// Allocation and free are O(1) (free amortised: see the [module documentation](self)).
/// `Arena::new` is `const`, so an arena can live in a `static`.
///
/// ```
/// use hal_core::memory::alloc::{Arena, RangeAllocator};
///
/// let mut arena = Arena::<16>::new(4096);
/// let weights = arena.allocate(1000, 64)?;
/// let mark = arena.mark();
/// let scratch = arena.allocate(300, 16)?;
/// assert_eq!(scratch.offset, 1008);
/// arena.reset_to(mark)?; // frees `scratch`
/// assert_eq!(arena.stats().bytes_in_use, 1000);
/// arena.free(weights)?; // LIFO: the whole block is free again
/// assert_eq!(arena.stats().largest_free_range, 4096);
/// # Ok::<(), hal_core::memory::alloc::AllocError>(())
/// ```
///
/// The records live in `S`: `[Record; RECORDS]` in an [`Arena`], `[Record]` in an
/// [`ArenaView`] (what a `&mut Arena` coerces to, whatever its record count).
#[derive(Debug)]
pub struct ArenaOf<S: ?Sized> {
    capacity: u64,
    /// End of the top record (0 when empty): the next allocation starts here, aligned up.
    top: u64,
    /// The next allocation's token: its `seq` in the high half, and in the low half the
    /// records on the stack, live or freed (its index).
    counter: u64,
    /// Bumped by every reset; marks carry the epoch they were taken in.
    epoch: u32,
    /// `seq` when the current epoch began.
    epoch_seq: u32,
    /// Sum of the requested sizes of live records.
    in_use: u64,
    /// The peak *before* the latest growth of `in_use`: allocation only raises `in_use`, so
    /// the true peak is `max(peak, in_use)`, folded in just before `in_use` falls. This keeps
    /// a compare and a store off the allocation path.
    peak: u64,
    records: S,
}

/// An arena with room for `RECORDS` records, its capacity in its type.
pub type Arena<const RECORDS: usize> = ArenaOf<[Record; RECORDS]>;

/// An arena whose record count is not in its type.
pub type ArenaView = ArenaOf<[Record]>;

/// A point to roll an [`Arena`] back to with [`Arena::reset_to`].
///
/// A mark stays usable until the arena is [`reset`](RangeAllocator::reset), and may be used
/// any number of times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ArenaMark {
    /// The arena's top when the mark was taken.
    top: u64,
    /// Records on the stack when the mark was taken.
    records: u32,
    /// The arena's allocation counter when the mark was taken.
    seq: u32,
    /// The arena's reset epoch when the mark was taken.
    epoch: u32,
}

impl ArenaMark {
    /// The arena's bump position (end of the last allocation) when the mark was taken.
    #[inline]
    pub const fn offset(&self) -> u64 {
        self.top
    }

    /// How many allocation records (live or freed but not yet reclaimed) the arena held when
    /// the mark was taken.
    #[inline]
    pub const fn records(&self) -> u32 {
        self.records
    }
}

impl<const RECORDS: usize> Arena<RECORDS> {
    /// An empty arena over `capacity` bytes.
    pub const fn new(capacity: u64) -> Self {
        Self {
            capacity,
            top: 0,
            counter: 0,
            epoch: 0,
            epoch_seq: 0,
            in_use: 0,
            peak: 0,
            records: [Record::EMPTY; RECORDS],
        }
    }
}

impl<const RECORDS: usize> Deref for Arena<RECORDS> {
    type Target = ArenaView;

    #[inline(always)]
    fn deref(&self) -> &ArenaView {
        self
    }
}

impl<const RECORDS: usize> DerefMut for Arena<RECORDS> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut ArenaView {
        self
    }
}

impl<const RECORDS: usize> RangeAllocator for Arena<RECORDS> {
    #[inline(always)]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline(always)]
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        ArenaView::allocate(self, size, alignment)
    }

    #[inline(always)]
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        ArenaView::free(self, range)
    }

    #[inline(always)]
    fn reset(&mut self) {
        ArenaView::reset(self)
    }

    #[inline(always)]
    fn stats(&self) -> AllocStats {
        ArenaView::stats(self)
    }
}

impl<S: ?Sized> ArenaOf<S> {
    /// Makes this arena, in place, what [`Arena::new`]`(capacity)` is (with its own record
    /// count): nothing allocated, no peak, every earlier range and mark void.
    pub fn renew(&mut self, capacity: u64) {
        self.capacity = capacity;
        self.top = 0;
        self.counter = 0;
        // Marks from before carry an older epoch: refused, not misread.
        self.epoch = self.epoch.wrapping_add(1);
        self.epoch_seq = 0;
        self.in_use = 0;
        self.peak = 0;
    }

    /// The current position: [`reset_to`](Self::reset_to) this mark frees every range
    /// allocated after this call.
    #[inline]
    pub const fn mark(&self) -> ArenaMark {
        ArenaMark {
            top: self.top,
            records: self.counter as u32,
            seq: (self.counter >> 32) as u32,
            epoch: self.epoch,
        }
    }

    /// Bytes still available above the bump position (ignoring alignment).
    #[inline]
    pub const fn remaining(&self) -> u64 {
        self.capacity - self.top
    }

    /// Records on the stack, live or freed.
    #[inline(always)]
    const fn len(&self) -> usize {
        self.counter as u32 as usize
    }

    /// `seq` of the next allocation.
    #[inline(always)]
    const fn seq(&self) -> u32 {
        (self.counter >> 32) as u32
    }

    /// Sets the records on the stack to `len` (at most the current count), keeping `seq`.
    #[inline(always)]
    fn truncate(&mut self, len: usize) {
        self.counter = (self.counter & !u64::from(u32::MAX)) | len as u64;
    }
}

impl ArenaView {
    /// Records usable at once: all of them, capped so that an index fits in a token's low
    /// half.
    #[inline(always)]
    fn limit(&self) -> usize {
        self.records.len().min(u32::MAX as usize)
    }

    /// Frees every range allocated after `mark` was taken (ranges freed already are skipped),
    /// and reclaims their space together with any freed space beneath it, so the bump
    /// position ends at or below [`mark.offset()`](ArenaMark::offset). Ranges allocated
    /// before the mark stay live. Time is linear in the records removed.
    ///
    /// # Errors
    ///
    /// [`AllocError::InvalidConfig`] if the mark is stale (the arena was
    /// [`reset`](RangeAllocator::reset) after it was taken) or does not come from this arena;
    /// nothing changes then.
    pub fn reset_to(&mut self, mark: ArenaMark) -> Result<(), AllocError> {
        if mark.epoch != self.epoch {
            return Err(AllocError::InvalidConfig(
                "stale arena mark: the arena was reset after the mark was taken",
            ));
        }
        // Allocations made since the mark, and since the current epoch began.
        let seq = self.seq();
        let since_mark = seq.wrapping_sub(mark.seq);
        let since_epoch = seq.wrapping_sub(self.epoch_seq);
        if since_mark > since_epoch || mark.top > self.capacity {
            return Err(AllocError::InvalidConfig(
                "arena mark does not come from this arena",
            ));
        }
        // Records allocated after the mark form a suffix of the stack (seqs increase with the
        // index): their age `seq - record.seq` is in 1..=since_mark.
        let mut len = self.len();
        while let Some(record) = len.checked_sub(1).and_then(|i| self.records.get(i)) {
            if seq.wrapping_sub(record.seq) > since_mark {
                break;
            }
            if !record.freed() {
                self.peak = self.peak.max(self.in_use);
                self.in_use -= record.size;
            }
            len -= 1;
        }
        self.truncate(len);
        self.pop_freed();
        Ok(())
    }

    /// Pops freed records off the top of the stack and moves `top` to the end of the new top
    /// record (0 when the stack is empty).
    #[inline]
    fn pop_freed(&mut self) {
        let mut top = 0;
        let mut len = self.len();
        while let Some(record) = len.checked_sub(1).and_then(|i| self.records.get(i)) {
            if !record.freed() {
                top = record.end();
                break;
            }
            len -= 1;
        }
        self.truncate(len);
        self.top = top;
    }

    #[cold]
    #[inline(never)]
    fn out_of_memory(&self, size: u64, alignment: u64) -> AllocError {
        AllocError::OutOfMemory {
            size,
            alignment,
            largest_free_range: self.capacity - self.top,
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_metadata(&self) -> AllocError {
        AllocError::OutOfMetadata {
            capacity: self.limit() as u32,
        }
    }
}

impl RangeAllocator for ArenaView {
    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline(always)]
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        check_request(size, alignment, self.capacity)?;
        let mask = alignment - 1;
        let Some(bumped) = self.top.checked_add(mask) else {
            return Err(self.out_of_memory(size, alignment));
        };
        let offset = bumped & !mask;
        // `size <= capacity`: `check_request` says so.
        if offset > self.capacity - size {
            return Err(self.out_of_memory(size, alignment));
        }
        let token = self.counter;
        let index = token as u32 as usize;
        let limit = self.limit();
        let record = match self.records.get_mut(index) {
            Some(record) if index < limit => record,
            _ => return Err(self.out_of_metadata()),
        };
        *record = Record {
            offset,
            size,
            seq: (token >> 32) as u32,
        };
        // One more record, and the next `seq` (wrapping): `index < limit <= u32::MAX`, so
        // the low half does not carry.
        self.counter = token.wrapping_add((1 << 32) | 1);
        self.top = offset + size;
        self.in_use += size;
        Ok(Range::new(offset, size, token))
    }

    #[inline]
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let token = range.token();
        let index = (token & u64::from(u32::MAX)) as usize;
        let seq = (token >> 32) as u32;
        let not_allocated = AllocError::NotAllocated {
            offset: range.offset,
        };
        let len = self.len();
        if index >= len {
            return Err(not_allocated);
        }
        let Some(record) = self.records.get_mut(index) else {
            return Err(not_allocated);
        };
        if record.freed() || record.seq != seq {
            return Err(not_allocated);
        }
        if record.offset != range.offset || record.size != range.size {
            return Err(AllocError::Mismatch {
                offset: range.offset,
                size: range.size,
                expected_offset: record.offset,
                expected_size: record.size,
            });
        }
        record.size = 0;
        self.peak = self.peak.max(self.in_use);
        self.in_use -= range.size;
        if index + 1 == len {
            self.truncate(index);
            self.pop_freed();
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.peak = self.peak.max(self.in_use);
        self.truncate(0);
        self.top = 0;
        self.in_use = 0;
        self.epoch = self.epoch.wrapping_add(1);
        self.epoch_seq = self.seq();
    }

    fn stats(&self) -> AllocStats {
        AllocStats {
            capacity: self.capacity,
            bytes_in_use: self.in_use,
            peak_bytes_in_use: self.peak.max(self.in_use),
            allocation_count: self.records[..self.len()]
                .iter()
                .filter(|r| !r.freed())
                .count() as u64,
            largest_free_range: self.capacity - self.top,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot<const N: usize>(a: &Arena<N>) -> (AllocStats, ArenaMark) {
        (a.stats(), a.mark())
    }

    #[test]
    fn aligns_and_bumps() {
        let mut a = Arena::<8>::new(1024);
        let r1 = a.allocate(3, 1).unwrap();
        let r2 = a.allocate(10, 16).unwrap();
        let r3 = a.allocate(1, 256).unwrap();
        assert_eq!((r1.offset, r1.size), (0, 3));
        assert_eq!((r2.offset, r2.size), (16, 10));
        assert_eq!((r3.offset, r3.size), (256, 1));
        let s = a.stats();
        assert_eq!(s.bytes_in_use, 14);
        assert_eq!(s.allocation_count, 3);
        assert_eq!(s.largest_free_range, 1024 - 257);
        assert_eq!(s.capacity, 1024);
    }

    #[test]
    fn whole_block_and_huge_alignment() {
        let mut a = Arena::<2>::new(64);
        let r = a.allocate(64, 1 << 63).unwrap();
        assert_eq!(r.offset, 0);
        assert_eq!(a.stats().largest_free_range, 0);
        // Aligning the top up overflows: out of memory, not a panic.
        let mut b = Arena::<2>::new(u64::MAX);
        b.allocate(1, 1).unwrap();
        assert!(matches!(
            b.allocate(1, 1 << 63),
            Ok(Range { offset, .. }) if offset == 1 << 63
        ));
        assert!(matches!(
            b.allocate(1, 1 << 63),
            Err(AllocError::OutOfMemory { .. })
        ));
    }

    #[test]
    fn lifo_free_rolls_back() {
        let mut a = Arena::<8>::new(256);
        let r1 = a.allocate(32, 1).unwrap();
        let r2 = a.allocate(32, 64).unwrap();
        a.free(r2).unwrap();
        assert_eq!(a.stats().largest_free_range, 256 - 32);
        let r3 = a.allocate(16, 1).unwrap();
        assert_eq!(r3.offset, 32);
        a.free(r3).unwrap();
        a.free(r1).unwrap();
        let s = a.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (0, 0));
        assert_eq!(s.largest_free_range, 256);
        assert_eq!(s.peak_bytes_in_use, 64);
    }

    #[test]
    fn tombstones_are_reclaimed_later() {
        let mut a = Arena::<8>::new(256);
        let r1 = a.allocate(10, 1).unwrap();
        let r2 = a.allocate(20, 1).unwrap();
        let r3 = a.allocate(30, 1).unwrap();
        a.free(r1).unwrap();
        a.free(r2).unwrap();
        let s = a.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (30, 1));
        assert_eq!(s.largest_free_range, 256 - 60); // not reclaimed yet
        a.free(r3).unwrap(); // pops r3, r2 and r1
        assert_eq!(a.stats().largest_free_range, 256);
        assert_eq!(a.mark().records(), 0);
        assert_eq!(a.allocate(5, 1).unwrap().offset, 0);
    }

    #[test]
    fn marks_roll_back() {
        let mut a = Arena::<8>::new(256);
        let keep = a.allocate(16, 1).unwrap();
        let m = a.mark();
        assert_eq!((m.offset(), m.records()), (16, 1));
        let x = a.allocate(8, 1).unwrap();
        let _y = a.allocate(8, 1).unwrap();
        a.free(x).unwrap(); // tombstone under y
        a.reset_to(m).unwrap();
        let s = a.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (16, 1));
        assert_eq!(s.largest_free_range, 240);
        // Ranges freed by the rollback are stale.
        assert_eq!(a.free(x), Err(AllocError::NotAllocated { offset: 16 }));
        // A mark can be reused, and a no-op rollback is fine.
        let z = a.allocate(4, 1).unwrap();
        assert_eq!(z.offset, 16);
        a.reset_to(m).unwrap();
        a.reset_to(m).unwrap();
        assert_eq!(a.stats().allocation_count, 1);
        a.free(keep).unwrap();
        // Everything below the mark was freed: the mark still frees what came after it.
        let w = a.allocate(4, 1).unwrap();
        a.reset_to(m).unwrap();
        assert_eq!(a.free(w), Err(AllocError::NotAllocated { offset: 0 }));
        assert_eq!(a.stats().largest_free_range, 256);
    }

    #[test]
    fn rollback_reclaims_tombstones_below_the_mark() {
        let mut a = Arena::<8>::new(256);
        let r1 = a.allocate(16, 1).unwrap();
        let m = a.mark();
        a.allocate(16, 1).unwrap();
        a.free(r1).unwrap();
        a.reset_to(m).unwrap();
        assert_eq!(a.stats().largest_free_range, 256);
        assert_eq!(a.stats().allocation_count, 0);
    }

    #[test]
    fn stale_and_foreign_marks_are_refused() {
        let mut a = Arena::<8>::new(256);
        let m = a.mark();
        a.allocate(16, 1).unwrap();
        a.reset();
        a.allocate(16, 1).unwrap();
        let before = snapshot(&a);
        assert!(matches!(a.reset_to(m), Err(AllocError::InvalidConfig(_))));
        assert_eq!(snapshot(&a), before);

        let mut other = Arena::<8>::new(256);
        for _ in 0..4 {
            other.allocate(1, 1).unwrap();
        }
        let future = other.mark();
        assert!(matches!(
            a.reset_to(future),
            Err(AllocError::InvalidConfig(_))
        ));
        assert_eq!(snapshot(&a), before);
    }

    #[test]
    fn reset_invalidates_ranges_keeps_peak() {
        let mut a = Arena::<4>::new(128);
        let r1 = a.allocate(100, 1).unwrap();
        a.reset();
        let s = a.stats();
        assert_eq!((s.bytes_in_use, s.allocation_count), (0, 0));
        assert_eq!(s.peak_bytes_in_use, 100);
        assert_eq!(s.largest_free_range, 128);
        assert_eq!(a.free(r1), Err(AllocError::NotAllocated { offset: 0 }));
        // Same slot and offset, new seq: the old range is still refused.
        let r2 = a.allocate(100, 1).unwrap();
        assert_eq!((r2.offset, r2.size), (r1.offset, r1.size));
        assert_eq!(a.free(r1), Err(AllocError::NotAllocated { offset: 0 }));
        a.free(r2).unwrap();
    }

    #[test]
    fn bad_frees_leave_state_intact() {
        let mut a = Arena::<4>::new(128);
        let r1 = a.allocate(8, 8).unwrap();
        let r2 = a.allocate(8, 8).unwrap();
        a.free(r1).unwrap();
        let before = snapshot(&a);
        // Double free.
        assert_eq!(a.free(r1), Err(AllocError::NotAllocated { offset: 0 }));
        // Forged: bad index, bad seq.
        let forged = Range::new(r2.offset, r2.size, r2.token() + 5);
        assert_eq!(a.free(forged), Err(AllocError::NotAllocated { offset: 8 }));
        let forged = Range::new(r2.offset, r2.size, r2.token() ^ (1 << 40));
        assert_eq!(a.free(forged), Err(AllocError::NotAllocated { offset: 8 }));
        // Mismatched offset or size.
        let wrong = Range::new(r2.offset, 4, r2.token());
        assert_eq!(
            a.free(wrong),
            Err(AllocError::Mismatch {
                offset: 8,
                size: 4,
                expected_offset: 8,
                expected_size: 8
            })
        );
        let wrong = Range::new(0, 8, r2.token());
        assert!(matches!(a.free(wrong), Err(AllocError::Mismatch { .. })));
        assert_eq!(snapshot(&a), before);
        a.free(r2).unwrap();
        assert_eq!(a.stats().largest_free_range, 128);
    }

    #[test]
    fn bad_requests_leave_state_intact() {
        let mut a = Arena::<4>::new(128);
        a.allocate(8, 8).unwrap();
        let before = snapshot(&a);
        assert_eq!(a.allocate(0, 8), Err(AllocError::ZeroSize));
        assert_eq!(
            a.allocate(8, 3),
            Err(AllocError::InvalidAlignment { alignment: 3 })
        );
        assert_eq!(
            a.allocate(129, 1),
            Err(AllocError::TooLarge {
                size: 129,
                capacity: 128
            })
        );
        assert_eq!(snapshot(&a), before);
    }

    #[test]
    fn out_of_metadata() {
        let mut a = Arena::<2>::new(128);
        let r1 = a.allocate(1, 1).unwrap();
        a.allocate(1, 1).unwrap();
        let before = snapshot(&a);
        assert_eq!(
            a.allocate(1, 1),
            Err(AllocError::OutOfMetadata { capacity: 2 })
        );
        assert_eq!(snapshot(&a), before);
        // A tombstone still holds its record.
        a.free(r1).unwrap();
        assert_eq!(
            a.allocate(1, 1),
            Err(AllocError::OutOfMetadata { capacity: 2 })
        );
        let mut none = Arena::<0>::new(128);
        assert_eq!(
            none.allocate(1, 1),
            Err(AllocError::OutOfMetadata { capacity: 0 })
        );
    }

    #[test]
    fn out_of_memory() {
        let mut a = Arena::<4>::new(100);
        a.allocate(60, 1).unwrap();
        let before = snapshot(&a);
        assert_eq!(
            a.allocate(41, 1),
            Err(AllocError::OutOfMemory {
                size: 41,
                alignment: 1,
                largest_free_range: 40
            })
        );
        // Fits unaligned, not aligned.
        assert!(matches!(
            a.allocate(37, 8),
            Err(AllocError::OutOfMemory { .. })
        ));
        assert_eq!(snapshot(&a), before);
        assert_eq!(a.allocate(40, 4).unwrap().offset, 60);
        assert_eq!(a.remaining(), 0);
    }

    #[test]
    fn works_in_a_static_initializer() {
        static ARENA: Arena<4> = Arena::new(4096);
        assert_eq!(ARENA.capacity(), 4096);
        assert_eq!(ARENA.stats().largest_free_range, 4096);
    }
}
