//! Size-class slab allocator: O(1) allocate and free for many small same-sized buffers.
//!
//! The design and its invariants are documented on [`Slab`].

use super::{check_request, AllocError, AllocStats, Range, RangeAllocator};

/// Most size classes a [`Slab`] can have.
pub const MAX_SIZE_CLASSES: usize = 16;
/// Slots in one span of a size class.
pub const SLOTS_PER_SPAN: u64 = 64;

/// End of a list.
const NIL: u32 = u32::MAX;
/// `class` of an entry not in use.
const UNUSED: u8 = u8::MAX;
/// `class` of an entry recording a pass-through allocation.
const PASS: u8 = u8::MAX - 1;
/// Bits of the token holding the slot index.
const SLOT_BITS: u32 = 6;
/// Mask of the token's entry index (bits 6..32).
const INDEX_MASK: u64 = (1 << (32 - SLOT_BITS)) - 1;
/// Most entries a slab can have: one less than a token can name, so that [`NO_TOKEN`]
/// names none.
const MAX_SPANS: usize = (1 << (32 - SLOT_BITS)) - 1;
/// A token no allocation has: its entry index is [`MAX_SPANS`], past every entry.
const NO_TOKEN: u64 = u64::MAX;
/// The bits of a token holding the slot's generation.
const SLOT_GENERATION: u64 = 0xff << 32;
/// `hot_class` when no slot is held.
const NO_CLASS: u32 = u32::MAX;
/// Largest alignment a span is requested with.
const MAX_SPAN_ALIGN_LOG2: u32 = 12;

/// One entry of the span table, two cache lines: the first holds everything allocating a slot
/// and freeing it read and write when the requested size is the class size, the second each
/// slot's generation.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Span {
    /// Bit `i` set when slot `i` is free.
    free: u64,
    /// Bit `i` set when live slot `i` was asked for exactly the slot size; the requested
    /// size of a live slot whose bit is clear is in the slab's `sizes`.
    exact: u64,
    /// The backing allocator's range (the span, or the pass-through allocation).
    backing: Range,
    /// Size of one slot (the class size); 0 for unused and pass-through entries.
    slot_size: u32,
    /// Next span of the class list, or next unused entry on the free-entry stack.
    next: u32,
    /// Previous span of the class list.
    prev: u32,
    /// Bumped whenever the entry is released (tokens carry its low 24 bits).
    generation: u32,
    /// The class index, [`PASS`] or [`UNUSED`].
    class: u8,
    /// Each slot's generation, bumped whenever the slot is handed out (in the next cache line
    /// of the entry).
    slot_generations: [u8; SLOTS_PER_SPAN as usize],
}

impl Span {
    const EMPTY: Span = Span {
        free: u64::MAX,
        exact: 0,
        backing: Range::new(0, 0, 0),
        slot_size: 0,
        next: NIL,
        prev: NIL,
        generation: 0,
        class: UNUSED,
        slot_generations: [0; SLOTS_PER_SPAN as usize],
    };

    /// The token of slot `slot`'s current allocation, in entry `index`.
    #[inline(always)]
    fn token(&self, index: u32, slot: u32) -> u64 {
        let stamp = self.generation << 8 | u32::from(self.slot_generations[slot as usize]);
        u64::from(stamp) << 32 | u64::from(index) << SLOT_BITS | u64::from(slot)
    }

    /// Hands out slot `slot` again: a new generation, so the ranges it was handed out in
    /// before are stale. Returns the new token.
    #[inline(always)]
    fn renew(&mut self, index: u32, slot: u32) -> u64 {
        let generation = &mut self.slot_generations[slot as usize];
        *generation = generation.wrapping_add(1);
        self.token(index, slot)
    }
}

/// Where the cold path of `allocate` found room.
enum Slot {
    /// Span `.1` of class `.0` has a free slot and heads the class list.
    Class(usize, u32),
    /// Entry `.0` records a pass-through allocation made for the request.
    PassThrough(u32),
}

/// One size class.
#[derive(Clone, Copy)]
struct Class {
    /// Slot size in bytes.
    size: u64,
    /// Alignment every slot honours (and the span's alignment).
    align: u64,
    /// First span of the class with a free slot, or [`NIL`].
    head: u32,
}

impl Class {
    const EMPTY: Class = Class {
        size: 0,
        align: 0,
        head: NIL,
    };
}

/// Size-class slab allocator over a backing [`RangeAllocator`], with room for `SPANS` spans
/// (and pass-through allocations) of metadata.
///
/// Allocation and free are O(1). The slab owns its backing allocator:
/// [`reset`](RangeAllocator::reset) resets it.
///
/// # Design
///
/// A [`Slab`] serves requests from up to [`MAX_SIZE_CLASSES`] size classes, given at
/// construction. A class's memory comes in *spans* of [`SLOTS_PER_SPAN`] slots, each span one
/// range of `class_size * 64` bytes taken from the backing [`RangeAllocator`] when the class has
/// no span with a free slot, and given back to it as soon as its last slot is freed. Freeing
/// everything therefore returns the whole block to the backing allocator.
///
/// Metadata lives out of band in a fixed table of `SPANS` entries (no heap):
///
/// - each entry holds the span's backing [`Range`], its class, a `u64` bitmap of free slots
///   (allocation takes `trailing_zeros`), links in its class's doubly-linked list of spans that
///   have a free slot, a generation, a bitmap of the live slots asked for exactly the class
///   size, and an 8-bit generation per slot. An entry is two 64-byte cache lines (the slot
///   generations in the second): allocating and freeing a slot asked for at its class size
///   touch only them and the slab's header;
/// - the requested size of every other live slot is kept in a side table, `sizes`, so
///   statistics are exact and `free` checks the size whatever was asked;
/// - unused entries form an intrusive stack, so taking and releasing an entry is O(1);
/// - a request that fits no class (larger than the largest class, or aligned beyond what the
///   classes guarantee) is passed straight to the backing allocator and recorded in an entry
///   of its own (a "span" of one slot), so `free` can check it and forward the backing's range.
///
/// A span of class size `s` is allocated with alignment `a = min(2^trailing_zeros(s), 4096)`,
/// and every slot of it starts at a multiple of `a`: that is the alignment the class
/// guarantees. A request `(size, alignment)` goes to the smallest class with `size <= s` and
/// `alignment <= a`.
///
/// The [`Range::token`] of an allocation is `(entry generation << 8 | slot generation) << 32
/// | entry << 6 | slot`. `free` decodes it with bounds checks, and answers
/// [`AllocError::NotAllocated`] unless both generations match and the slot is live, and
/// [`AllocError::Mismatch`] unless the range's offset and size are the ones handed out. A
/// slot's generation is bumped whenever the slot is handed out, an entry's whenever it is
/// released and on [`reset`](RangeAllocator::reset), so stale ranges are recognised: a stale
/// range is mistaken for a live one only if its slot was handed out again a multiple of 256
/// times since, in an entry released a multiple of 2^24 times since.
///
/// # Invariants
///
/// - A class span in use has at least one live slot (`free != u64::MAX`); it is linked in its
///   class's list exactly when it has a free slot (`free != 0`).
/// - Unused and pass-through entries are never linked in a class list; unused entries have
///   `free == u64::MAX`, pass-through entries have only slot 0 live.
/// - `bytes_in_use` is the sum over live slots and pass-through allocations, the held slot
///   included (the allocation count is not kept: [`stats`](RangeAllocator::stats) counts the
///   live slots, and leaves the held slot out of both);
/// - a held slot (the last one freed on the fast path, kept for the next allocation of its
///   class) is marked live in its span, which has another live slot; every other operation
///   that can change the slab gives it back to its span first (once the call is sure to
///   succeed), so it never keeps a span from being released.
/// - Errors are detected before anything is changed, so a refused call leaves the slab (and
///   its backing allocator) as it was. The one exception is a backing allocator refusing to
///   take back a span it handed out, which a correct backing never does.
///
/// No operation divides: slot offsets are `span offset + slot * class size`, and `free` takes
/// the slot index from the token.
///
/// ```
/// use hal_core::memory::alloc::{RangeAllocator, Slab, Tlsf};
///
/// // Classes of 64, 256 and 1024 bytes over a 1 MiB block, with room for 32 spans.
/// let mut slab = Slab::<_, 32>::new(Tlsf::<64>::new(1 << 20), &[64, 256, 1024])?;
/// let a = slab.allocate(200, 16)?; // served by the 256-byte class
/// assert_eq!(a.size, 200);
/// slab.free(a)?;
/// assert_eq!(slab.stats().largest_free_range, 1 << 20);
/// # Ok::<(), hal_core::memory::alloc::AllocError>(())
/// ```
pub struct Slab<A: RangeAllocator, const SPANS: usize> {
    backing: A,
    capacity: u64,
    classes: [Class; MAX_SIZE_CLASSES],
    class_count: usize,
    /// One-entry cache of the last class lookup: `(size, alignment) -> class`.
    last_size: u64,
    last_align: u64,
    last_class: usize,
    /// Whether `last_size` is `last_class`'s size (so the held slot may serve it).
    last_exact: bool,
    spans: [Span; SPANS],
    /// Requested size of each live slot whose `exact` bit is clear, by entry.
    sizes: [[u32; SLOTS_PER_SPAN as usize]; SPANS],
    /// The token of the last slot freed on the fast path, held back from its span (which
    /// still marks it live) for the next allocation of its class, or [`NO_TOKEN`].
    hot_token: u64,
    /// The held slot's offset.
    hot_offset: u64,
    /// The held slot's class, or [`NO_CLASS`].
    hot_class: u32,
    /// Top of the stack of released entries, linked through `next`.
    free_entries: u32,
    /// Entries at or above this index have never been used since construction or reset.
    high_water: u32,
    bytes_in_use: u64,
    /// The peak before the latest growth of `bytes_in_use`: the true peak is
    /// `max(peak_bytes_in_use, bytes_in_use)`, folded in just before `bytes_in_use` falls, so
    /// allocating only adds.
    peak_bytes_in_use: u64,
}

impl<A: RangeAllocator, const SPANS: usize> Slab<A, SPANS> {
    /// A slab with the given size classes over `backing`, which should be empty.
    ///
    /// `class_sizes` must be strictly ascending, nonzero, at most [`MAX_SIZE_CLASSES`] of them,
    /// each at most `u32::MAX` with a span (`size * SLOTS_PER_SPAN`) no larger than the backing
    /// block; `SPANS` must be between 1 and 2^26 - 1. Otherwise the answer is
    /// [`AllocError::InvalidConfig`].
    pub fn new(backing: A, class_sizes: &[u64]) -> Result<Self, AllocError> {
        if SPANS == 0 || SPANS > MAX_SPANS {
            return Err(AllocError::InvalidConfig(
                "SPANS must be between 1 and 2^26 - 1",
            ));
        }
        if class_sizes.is_empty() {
            return Err(AllocError::InvalidConfig(
                "at least one size class is needed",
            ));
        }
        if class_sizes.len() > MAX_SIZE_CLASSES {
            return Err(AllocError::InvalidConfig(
                "more size classes than MAX_SIZE_CLASSES",
            ));
        }
        let capacity = backing.capacity();
        let mut classes = [Class::EMPTY; MAX_SIZE_CLASSES];
        let mut previous = 0u64;
        for (class, &size) in classes.iter_mut().zip(class_sizes) {
            if size == 0 {
                return Err(AllocError::InvalidConfig("a size class is zero"));
            }
            if size <= previous {
                return Err(AllocError::InvalidConfig(
                    "size classes are not strictly ascending",
                ));
            }
            if size > u64::from(u32::MAX) {
                return Err(AllocError::InvalidConfig(
                    "a size class is larger than u32::MAX",
                ));
            }
            if size * SLOTS_PER_SPAN > capacity {
                return Err(AllocError::InvalidConfig(
                    "a span of the largest size class does not fit in the backing block",
                ));
            }
            previous = size;
            *class = Class {
                size,
                align: 1 << size.trailing_zeros().min(MAX_SPAN_ALIGN_LOG2),
                head: NIL,
            };
        }
        Ok(Self {
            backing,
            capacity,
            classes,
            class_count: class_sizes.len(),
            // A valid entry: the smallest class serves its own size at alignment 1.
            last_size: classes[0].size,
            last_align: 1,
            last_class: 0,
            last_exact: true,
            spans: [Span::EMPTY; SPANS],
            sizes: [[0; SLOTS_PER_SPAN as usize]; SPANS],
            hot_token: NO_TOKEN,
            hot_offset: 0,
            hot_class: NO_CLASS,
            free_entries: NIL,
            high_water: 0,
            bytes_in_use: 0,
            peak_bytes_in_use: 0,
        })
    }

    /// The backing allocator.
    pub fn backing(&self) -> &A {
        &self.backing
    }

    /// The smallest class serving `(size, alignment)`, or `class_count` when none does, after
    /// [`check_request`]. The last answer is cached: a request equal to the last one skips
    /// both (the cache only ever holds a request that passed the checks).
    #[inline(always)]
    fn class_for(&mut self, size: u64, alignment: u64) -> Result<usize, AllocError> {
        if size == self.last_size && alignment == self.last_align {
            return Ok(self.last_class);
        }
        self.class_for_slow(size, alignment)
    }

    #[inline(never)]
    fn class_for_slow(&mut self, size: u64, alignment: u64) -> Result<usize, AllocError> {
        check_request(size, alignment, self.capacity)?;
        let count = self.class_count;
        let class = self.classes[..count]
            .iter()
            .position(|c| size <= c.size && alignment <= c.align)
            .unwrap_or(count);
        if class < count {
            // Only classes are cached, so a cached class indexes `classes` as it is.
            self.last_size = size;
            self.last_align = alignment;
            self.last_class = class;
            self.last_exact = size == self.classes[class].size;
        }
        Ok(class)
    }

    /// Index of an unused entry, without taking it.
    #[inline]
    fn peek_entry(&self) -> Result<u32, AllocError> {
        if self.free_entries != NIL {
            Ok(self.free_entries)
        } else if (self.high_water as usize) < SPANS {
            Ok(self.high_water)
        } else {
            Err(AllocError::OutOfMetadata {
                capacity: SPANS as u32,
            })
        }
    }

    /// Takes the entry [`peek_entry`](Self::peek_entry) answered.
    #[inline]
    fn take_entry(&mut self, index: u32) {
        if index == self.free_entries {
            self.free_entries = self.spans[index as usize].next;
        } else {
            self.high_water += 1;
        }
    }

    /// Marks entry `index` unused (bumping its generation) and pushes it on the stack.
    #[inline]
    fn release_entry(&mut self, index: u32) {
        let span = &mut self.spans[index as usize];
        span.generation = span.generation.wrapping_add(1);
        span.class = UNUSED;
        span.slot_size = 0;
        span.free = u64::MAX;
        span.exact = 0;
        span.prev = NIL;
        span.next = self.free_entries;
        self.free_entries = index;
    }

    /// Takes a new span for `class` from the backing allocator and links it at the head of the
    /// class list.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, class: usize) -> Result<u32, AllocError> {
        let index = self.peek_entry()?;
        let Class { size, align, head } = self.classes[class];
        let backing = self.backing.allocate(size * SLOTS_PER_SPAN, align)?;
        self.take_entry(index);
        let span = &mut self.spans[index as usize];
        span.backing = backing;
        // `size <= u32::MAX`, checked by `new`.
        span.slot_size = size as u32;
        span.free = u64::MAX;
        span.exact = 0;
        span.next = head;
        span.prev = NIL;
        span.class = class as u8;
        if head != NIL {
            self.spans[head as usize].prev = index;
        }
        self.classes[class].head = index;
        Ok(index)
    }

    /// Serves a request no class fits from the backing allocator.
    #[cold]
    #[inline(never)]
    fn allocate_large(&mut self, size: u64, alignment: u64) -> Result<Slot, AllocError> {
        let index = self.peek_entry()?;
        let backing = self.backing.allocate(size, alignment)?;
        // Nothing below fails: settle the held slot before the bytes in use grow.
        self.give_back_held();
        self.take_entry(index);
        let span = &mut self.spans[index as usize];
        span.backing = backing;
        span.slot_size = 0;
        span.free = !1;
        span.next = NIL;
        span.prev = NIL;
        span.class = PASS;
        self.account_alloc(size);
        Ok(Slot::PassThrough(index))
    }

    /// Frees a pass-through allocation recorded in entry `index`.
    #[cold]
    #[inline(never)]
    fn free_large(&mut self, index: u32, range: Range) -> Result<(), AllocError> {
        let backing = self.spans[index as usize].backing;
        if range.offset != backing.offset || range.size != backing.size {
            return Err(AllocError::Mismatch {
                offset: range.offset,
                size: range.size,
                expected_offset: backing.offset,
                expected_size: backing.size,
            });
        }
        self.backing.free(backing)?;
        self.give_back_held();
        self.release_entry(index);
        self.account_free(range.size);
        Ok(())
    }

    /// Gives the entirely free class span `index` back to the backing allocator.
    #[cold]
    #[inline(never)]
    fn release_span(&mut self, index: u32) -> Result<(), AllocError> {
        let span = self.spans[index as usize];
        self.backing.free(span.backing)?;
        if span.prev != NIL {
            self.spans[span.prev as usize].next = span.next;
        } else {
            self.classes[usize::from(span.class)].head = span.next;
        }
        if span.next != NIL {
            self.spans[span.next as usize].prev = span.prev;
        }
        self.release_entry(index);
        Ok(())
    }

    /// Takes the first free slot of span `index`, the head of `class`'s list, for a request
    /// of `size` bytes, and unlinks the span if that filled it.
    #[inline(always)]
    fn take_slot(&mut self, class: usize, index: u32, size: u64) -> Range {
        let span = &mut self.spans[index as usize];
        let slot = span.free.trailing_zeros();
        span.free &= span.free - 1;
        let slot_size = u64::from(span.slot_size);
        let offset = span.backing.offset + u64::from(slot) * slot_size;
        let token = span.renew(index, slot);
        let bit = 1u64 << slot;
        if size == slot_size {
            span.exact |= bit;
        } else {
            span.exact &= !bit;
            // `size <= class size <= u32::MAX`, checked by `new`.
            self.sizes[index as usize][slot as usize] = size as u32;
        }
        if self.spans[index as usize].free == 0 {
            // Full: unlink from the head of the class list (its links are left as they are:
            // linking it again sets both).
            let next = self.spans[index as usize].next;
            self.classes[class].head = next;
            if let Some(next) = self.spans.get_mut(next as usize) {
                next.prev = NIL;
            }
        }
        self.account_alloc(size);
        Range::new(offset, size, token)
    }

    /// Links class span `index`, which has a free slot again, at the head of its list.
    #[inline(always)]
    fn link_at_head(&mut self, class: usize, index: u32) {
        let head = self.classes[class].head;
        let span = &mut self.spans[index as usize];
        span.next = head;
        span.prev = NIL;
        if let Some(head) = self.spans.get_mut(head as usize) {
            head.prev = index;
        }
        self.classes[class].head = index;
    }

    /// Every request the fast path of `allocate` does not serve.
    #[cold]
    #[inline(never)]
    fn allocate_slow(&mut self, size: u64, alignment: u64) -> Result<Slot, AllocError> {
        let class = self.class_for(size, alignment)?;
        if class >= self.class_count {
            return self.allocate_large(size, alignment);
        }
        if self.hot_class == class as u32 {
            // The slot freed last is the one taken first, whatever the size; its span then
            // has room, so nothing below can fail.
            self.give_back_held();
        }
        let head = self.classes[class].head;
        let index = if head != NIL { head } else { self.grow(class)? };
        // A held slot of another class goes back too, now that nothing can fail: the bytes
        // in use are settled before they grow.
        self.give_back_held();
        Ok(Slot::Class(class, index))
    }

    /// Every free the fast path does not take: checks everything, answers the errors, frees
    /// pass-through allocations, slots of other sizes and the last slot of a span.
    #[cold]
    #[inline(never)]
    fn free_slow(&mut self, range: Range) -> Result<(), AllocError> {
        let token = range.token();
        if token == self.hot_token {
            // The held slot: already freed.
            return Err(AllocError::NotAllocated {
                offset: range.offset,
            });
        }
        let index = ((token >> SLOT_BITS) & INDEX_MASK) as u32;
        let slot = (token & (SLOTS_PER_SPAN - 1)) as usize;
        let not_allocated = AllocError::NotAllocated {
            offset: range.offset,
        };
        let Some(span) = self.spans.get(index as usize) else {
            return Err(not_allocated);
        };
        let bit = 1u64 << slot;
        if span.token(index, slot as u32) != token || span.free & bit != 0 {
            return Err(not_allocated);
        }
        if span.class == PASS {
            return self.free_large(index, range);
        }
        let slot_size = u64::from(span.slot_size);
        let expected_offset = span.backing.offset + slot as u64 * slot_size;
        let expected_size = if span.exact & bit != 0 {
            slot_size
        } else {
            u64::from(self.sizes[index as usize][slot])
        };
        if range.offset != expected_offset || range.size != expected_size {
            return Err(AllocError::Mismatch {
                offset: range.offset,
                size: range.size,
                expected_offset,
                expected_size,
            });
        }
        // Valid: from here on it succeeds (a span is given back only once it is all free).
        self.give_back_held();
        let span = &self.spans[index as usize];
        let was_full = span.free == 0;
        let free = span.free | bit;
        if free == u64::MAX {
            self.release_span(index)?;
        } else {
            let class = usize::from(span.class);
            self.spans[index as usize].free = free;
            if was_full {
                // It has a free slot again.
                self.link_at_head(class, index);
            }
        }
        self.account_free(expected_size);
        Ok(())
    }

    /// The bytes of the held slot (its class size), or 0.
    fn held_bytes(&self) -> u64 {
        match self.classes.get(self.hot_class as usize) {
            Some(class) if self.hot_token != NO_TOKEN => class.size,
            _ => 0,
        }
    }

    /// Gives the held slot, if any, back to its span. Its span keeps another live slot (it
    /// did when the slot was held, and every free since went through `free_slow`, which
    /// gives the held slot back first), so the span stays in use.
    fn give_back_held(&mut self) {
        let token = self.hot_token;
        if token == NO_TOKEN {
            return;
        }
        self.hot_token = NO_TOKEN;
        self.hot_class = NO_CLASS;
        let index = ((token >> SLOT_BITS) & INDEX_MASK) as u32;
        let bit = 1u64 << (token & (SLOTS_PER_SPAN - 1));
        let span = &mut self.spans[index as usize];
        let was_full = span.free == 0;
        span.free |= bit;
        debug_assert!(
            span.free != u64::MAX,
            "a held slot's span keeps a live slot"
        );
        let slot_size = u64::from(span.slot_size);
        self.account_free(slot_size);
        let span = &self.spans[index as usize];
        if was_full {
            let class = usize::from(span.class);
            self.link_at_head(class, index);
        }
    }

    #[inline(always)]
    fn account_alloc(&mut self, size: u64) {
        self.bytes_in_use += size;
    }

    #[inline(always)]
    fn account_free(&mut self, size: u64) {
        if self.bytes_in_use > self.peak_bytes_in_use {
            self.peak_bytes_in_use = self.bytes_in_use;
        }
        self.bytes_in_use -= size;
    }
}

impl<A: RangeAllocator, const SPANS: usize> RangeAllocator for Slab<A, SPANS> {
    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The fast path: a request equal to the last one, whose class has a span with a free
    /// slot. Everything else takes [`allocate_slow`](Slab::allocate_slow).
    #[inline(always)]
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        if size == self.last_size && alignment == self.last_align {
            // The cache holds a class below `class_count <= MAX_SIZE_CLASSES`.
            let class = self.last_class % MAX_SIZE_CLASSES;
            if self.hot_token != NO_TOKEN {
                if self.hot_class == class as u32 && self.last_exact {
                    // The held slot, asked for at its class size: its span marks it live and
                    // its bytes were never taken off `bytes_in_use`.
                    let held = self.hot_token;
                    self.hot_token = NO_TOKEN;
                    self.hot_class = NO_CLASS;
                    // Handed out again: the held token with the slot's generation bumped
                    // (its low stamp byte), which the span learns.
                    let token =
                        held & !SLOT_GENERATION | held.wrapping_add(1 << 32) & SLOT_GENERATION;
                    let index = ((held >> SLOT_BITS) & INDEX_MASK) as usize;
                    let slot = (held & (SLOTS_PER_SPAN - 1)) as usize;
                    self.spans[index].slot_generations[slot] = (token >> 32) as u8;
                    return Ok(Range::new(self.hot_offset, size, token));
                }
                // Anything else: the slot goes back to its span, to be taken from there.
                self.give_back_held();
            }
            let head = self.classes[class].head;
            // `NIL` is past the table's end.
            if (head as usize) < SPANS {
                return Ok(self.take_slot(class, head, size));
            }
        }
        // The range is built here, not by the cold path, so that the fast path's range and
        // this one meet in registers rather than in a returned `Result` in memory.
        match self.allocate_slow(size, alignment)? {
            Slot::Class(class, index) => Ok(self.take_slot(class, index, size)),
            Slot::PassThrough(index) => {
                let span = &mut self.spans[index as usize];
                let token = span.renew(index, 0);
                Ok(Range::new(span.backing.offset, size, token))
            }
        }
    }

    /// The fast path: no slot held, and a slot asked for exactly its class size whose span
    /// keeps another live slot. The slot is held back for the next allocation of its class,
    /// reading the span's entry only to check it. Everything else, errors included,
    /// takes [`free_slow`](Slab::free_slow), which checks from scratch.
    #[inline(always)]
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let token = range.token();
        let index = ((token >> SLOT_BITS) & INDEX_MASK) as usize;
        let slot = token & (SLOTS_PER_SPAN - 1);
        let nothing_held = self.hot_token == NO_TOKEN;
        if let Some(span) = self.spans.get(index) {
            let bit = 1u64 << slot;
            let slot_size = u64::from(span.slot_size);
            // Pass-through and unused entries keep `exact` clear: they never pass.
            if nothing_held
                && span.token(index as u32, slot as u32) == token
                && span.free & bit == 0
                && span.exact & bit != 0
                && span.free | bit != u64::MAX
                && range.offset == span.backing.offset + slot * slot_size
                && range.size == slot_size
            {
                // Its bytes stay counted until it is given back (`stats` leaves them out).
                self.hot_class = u32::from(span.class);
                self.hot_token = token;
                self.hot_offset = range.offset;
                return Ok(());
            }
        }
        self.free_slow(range)
    }

    fn reset(&mut self) {
        self.peak_bytes_in_use = self.peak_bytes_in_use.max(self.bytes_in_use);
        self.backing.reset();
        for span in &mut self.spans[..self.high_water as usize] {
            span.generation = span.generation.wrapping_add(1);
            span.class = UNUSED;
            span.slot_size = 0;
            span.free = u64::MAX;
            span.exact = 0;
            span.next = NIL;
            span.prev = NIL;
        }
        for class in &mut self.classes {
            class.head = NIL;
        }
        self.hot_token = NO_TOKEN;
        self.hot_class = NO_CLASS;
        self.free_entries = NIL;
        self.high_water = 0;
        self.bytes_in_use = 0;
    }

    fn stats(&self) -> AllocStats {
        AllocStats {
            capacity: self.capacity,
            bytes_in_use: self.bytes_in_use - self.held_bytes(),
            // `bytes_in_use` with the held slot is what was in use just before it was freed.
            peak_bytes_in_use: self.peak_bytes_in_use.max(self.bytes_in_use),
            allocation_count: self.spans[..self.high_water as usize]
                .iter()
                .map(|span| match span.class {
                    UNUSED => 0,
                    PASS => 1,
                    _ => u64::from((!span.free).count_ones()),
                })
                .sum::<u64>()
                // The held slot looks live to its span.
                - u64::from(self.hot_token != NO_TOKEN),
            largest_free_range: self.backing.stats().largest_free_range,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First fit over at most 16 live ranges kept sorted by offset; tokens are a counter.
    struct FirstFit {
        capacity: u64,
        live: [(u64, u64, u64); 16],
        len: usize,
        next_token: u64,
        peak: u64,
    }

    impl FirstFit {
        fn new(capacity: u64) -> Self {
            Self {
                capacity,
                live: [(0, 0, 0); 16],
                len: 0,
                next_token: 1,
                peak: 0,
            }
        }
    }

    impl RangeAllocator for FirstFit {
        fn capacity(&self) -> u64 {
            self.capacity
        }

        fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
            check_request(size, alignment, self.capacity)?;
            if self.len == self.live.len() {
                return Err(AllocError::OutOfMetadata { capacity: 16 });
            }
            let mut start = 0u64;
            for i in 0..=self.len {
                let aligned = start.next_multiple_of(alignment);
                let limit = if i < self.len {
                    self.live[i].0
                } else {
                    self.capacity
                };
                if aligned.checked_add(size).is_some_and(|end| end <= limit) {
                    self.live.copy_within(i..self.len, i + 1);
                    let token = self.next_token;
                    self.next_token += 1;
                    self.live[i] = (aligned, size, token);
                    self.len += 1;
                    self.peak = self.peak.max(self.stats().bytes_in_use);
                    return Ok(Range::new(aligned, size, token));
                }
                if i < self.len {
                    start = self.live[i].0 + self.live[i].1;
                }
            }
            Err(AllocError::OutOfMemory {
                size,
                alignment,
                largest_free_range: self.stats().largest_free_range,
            })
        }

        fn free(&mut self, range: Range) -> Result<(), AllocError> {
            let i = self.live[..self.len]
                .iter()
                .position(|&l| l == (range.offset, range.size, range.token()))
                .ok_or(AllocError::NotAllocated {
                    offset: range.offset,
                })?;
            self.live.copy_within(i + 1..self.len, i);
            self.len -= 1;
            Ok(())
        }

        fn reset(&mut self) {
            self.len = 0;
        }

        fn stats(&self) -> AllocStats {
            let live = &self.live[..self.len];
            let mut largest = 0;
            let mut start = 0;
            for &(o, s, _) in live {
                largest = largest.max(o - start);
                start = o + s;
            }
            AllocStats {
                capacity: self.capacity,
                bytes_in_use: live.iter().map(|r| r.1).sum(),
                peak_bytes_in_use: self.peak,
                allocation_count: live.len() as u64,
                largest_free_range: largest.max(self.capacity - start),
            }
        }
    }

    const CAP: u64 = 1 << 16;

    fn slab<const S: usize>() -> Slab<FirstFit, S> {
        Slab::new(FirstFit::new(CAP), &[16, 48, 64, 256]).unwrap()
    }

    /// Everything the slab reports, and its backing's, for "unchanged" checks.
    fn snapshot<const S: usize>(s: &Slab<FirstFit, S>) -> (AllocStats, AllocStats, usize) {
        (s.stats(), s.backing().stats(), s.backing().len)
    }

    #[test]
    fn bad_config_is_refused() {
        let new = |classes: &[u64]| Slab::<_, 4>::new(FirstFit::new(CAP), classes).err();
        assert!(matches!(new(&[]), Some(AllocError::InvalidConfig(_))));
        assert!(matches!(new(&[0, 16]), Some(AllocError::InvalidConfig(_))));
        assert!(matches!(new(&[32, 16]), Some(AllocError::InvalidConfig(_))));
        assert!(matches!(new(&[16, 16]), Some(AllocError::InvalidConfig(_))));
        assert!(matches!(new(&[CAP]), Some(AllocError::InvalidConfig(_))));
        let many: [u64; MAX_SIZE_CLASSES + 1] = core::array::from_fn(|i| 8 * (i as u64 + 1));
        assert!(matches!(new(&many), Some(AllocError::InvalidConfig(_))));
        assert!(new(&many[..MAX_SIZE_CLASSES]).is_none());
        let huge = Slab::<_, 4>::new(FirstFit::new(u64::MAX), &[1 << 33]).err();
        assert!(matches!(huge, Some(AllocError::InvalidConfig(_))));
        let none = Slab::<_, 0>::new(FirstFit::new(CAP), &[16]).err();
        assert!(matches!(none, Some(AllocError::InvalidConfig(_))));
    }

    #[test]
    fn bad_requests_are_refused() {
        let mut s = slab::<4>();
        assert_eq!(s.allocate(0, 8), Err(AllocError::ZeroSize));
        assert_eq!(
            s.allocate(8, 3),
            Err(AllocError::InvalidAlignment { alignment: 3 })
        );
        assert_eq!(
            s.allocate(CAP + 1, 1),
            Err(AllocError::TooLarge {
                size: CAP + 1,
                capacity: CAP
            })
        );
        assert_eq!(s.stats().allocation_count, 0);
    }

    #[test]
    fn smallest_fitting_class_is_chosen() {
        let mut s = slab::<8>();
        // (size, alignment) -> class size
        for (size, align, class) in [
            (1, 1, 16),
            (16, 16, 16),
            (17, 1, 48),
            (40, 16, 48),
            (40, 32, 64),
            (64, 64, 64),
            (65, 1, 256),
            (100, 256, 256),
        ] {
            let r = s.allocate(size, align).unwrap();
            assert_eq!(r.size, size);
            assert_eq!(r.offset % align, 0);
            let span = s.spans[((r.token() >> 6) & INDEX_MASK) as usize];
            assert_eq!(
                u64::from(span.slot_size),
                class,
                "size {size} align {align}"
            );
        }
        assert_eq!(
            s.stats().bytes_in_use,
            1 + 16 + 17 + 40 + 40 + 64 + 65 + 100
        );
        assert_eq!(s.stats().allocation_count, 8);
    }

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut s = slab::<8>();
        let mut got = [Range::new(0, 0, 0); 70];
        for r in got.iter_mut() {
            *r = s.allocate(48, 16).unwrap();
            assert_eq!(r.offset % 16, 0);
            assert!(r.end() <= CAP);
        }
        for (i, a) in got.iter().enumerate() {
            for b in &got[i + 1..] {
                assert!(!a.overlaps(b));
            }
        }
        // 70 slots of 64 per span: two spans.
        assert_eq!(s.backing().len, 2);
        for r in got {
            s.free(r).unwrap();
        }
        assert_eq!(s.backing().len, 0);
        assert_eq!(s.stats().largest_free_range, CAP);
        assert_eq!(s.stats().bytes_in_use, 0);
        assert_eq!(s.stats().peak_bytes_in_use, 70 * 48);
    }

    #[test]
    fn spans_come_and_go_with_their_slots() {
        let mut s = slab::<4>();
        let a = s.allocate(16, 1).unwrap();
        let b = s.allocate(16, 1).unwrap();
        assert_eq!(b.offset, a.offset + 16);
        assert_eq!(s.backing().len, 1);
        assert_eq!(s.backing().stats().bytes_in_use, 16 * SLOTS_PER_SPAN);
        s.free(a).unwrap();
        assert_eq!(s.backing().len, 1);
        // The freed slot is reused first.
        let c = s.allocate(10, 2).unwrap();
        assert_eq!(c.offset, a.offset);
        s.free(b).unwrap();
        s.free(c).unwrap();
        assert_eq!(s.backing().len, 0);
        assert_eq!(s.stats().largest_free_range, CAP);
        // The entry is reused; the old ranges are stale.
        let d = s.allocate(16, 1).unwrap();
        assert_eq!(d.offset, a.offset);
        assert_ne!(d.token(), a.token());
        let before = snapshot(&s);
        assert_eq!(
            s.free(a),
            Err(AllocError::NotAllocated { offset: a.offset })
        );
        assert_eq!(snapshot(&s), before);
        s.free(d).unwrap();
    }

    #[test]
    fn full_spans_leave_and_rejoin_the_class_list() {
        let mut s = slab::<4>();
        let first: [Range; 64] = core::array::from_fn(|_| s.allocate(16, 1).unwrap());
        let second = s.allocate(16, 1).unwrap();
        assert_eq!(s.backing().len, 2);
        assert!(second.offset >= first[63].end() || second.end() <= first[0].offset);
        // A slot of the full span frees up: it is used next.
        s.free(first[5]).unwrap();
        let again = s.allocate(16, 1).unwrap();
        assert_eq!(again.offset, first[5].offset);
        s.free(second).unwrap();
        assert_eq!(s.backing().len, 1);
        s.free(again).unwrap();
        for r in first.iter().filter(|r| r.offset != first[5].offset) {
            s.free(*r).unwrap();
        }
        assert_eq!(s.backing().len, 0);
        assert_eq!(s.stats().allocation_count, 0);
    }

    #[test]
    fn large_requests_pass_through() {
        let mut s = slab::<4>();
        let big = s.allocate(1000, 8).unwrap();
        assert_eq!(big.size, 1000);
        assert_eq!(s.backing().stats().bytes_in_use, 1000);
        // Alignment beyond any class also passes through.
        let aligned = s.allocate(16, 8192).unwrap();
        assert_eq!(aligned.offset % 8192, 0);
        assert_eq!(s.backing().stats().bytes_in_use, 1016);
        assert_eq!(s.stats().bytes_in_use, 1016);
        assert_eq!(s.stats().allocation_count, 2);

        let before = snapshot(&s);
        let shrunk = Range::new(big.offset, 999, big.token());
        assert!(matches!(s.free(shrunk), Err(AllocError::Mismatch { .. })));
        let wrong_slot = Range::new(big.offset, 1000, big.token() | 1);
        assert!(matches!(
            s.free(wrong_slot),
            Err(AllocError::NotAllocated { .. })
        ));
        assert_eq!(snapshot(&s), before);

        s.free(big).unwrap();
        s.free(aligned).unwrap();
        assert_eq!(
            s.free(big),
            Err(AllocError::NotAllocated { offset: big.offset })
        );
        assert_eq!(s.stats().largest_free_range, CAP);
        assert_eq!(s.stats().bytes_in_use, 0);
    }

    #[test]
    fn bad_frees_change_nothing() {
        let mut s = slab::<4>();
        let a = s.allocate(20, 4).unwrap();
        let b = s.allocate(30, 4).unwrap();
        let before = snapshot(&s);
        // Wrong size, wrong offset.
        let wrong_size = Range::new(a.offset, 21, a.token());
        assert_eq!(
            s.free(wrong_size),
            Err(AllocError::Mismatch {
                offset: a.offset,
                size: 21,
                expected_offset: a.offset,
                expected_size: 20
            })
        );
        let wrong_offset = Range::new(b.offset, 20, a.token());
        assert!(matches!(
            s.free(wrong_offset),
            Err(AllocError::Mismatch { .. })
        ));
        // Forged tokens: entry out of range, unused entry, free slot, wrong generation.
        for token in [
            u64::MAX,
            INDEX_MASK << SLOT_BITS,
            3 << 6,
            a.token() + 5,
            a.token() ^ (1 << 32),
        ] {
            assert_eq!(
                s.free(Range::new(a.offset, 20, token)),
                Err(AllocError::NotAllocated { offset: a.offset })
            );
        }
        assert_eq!(snapshot(&s), before);
        // Double free.
        s.free(a).unwrap();
        let before = snapshot(&s);
        assert_eq!(
            s.free(a),
            Err(AllocError::NotAllocated { offset: a.offset })
        );
        assert_eq!(snapshot(&s), before);
        s.free(b).unwrap();
        assert_eq!(s.stats().largest_free_range, CAP);
    }

    #[test]
    fn reset_frees_everything_and_keeps_peak() {
        let mut s = slab::<4>();
        let a = s.allocate(20, 4).unwrap();
        let big = s.allocate(5000, 4).unwrap();
        let c = s.allocate(200, 4).unwrap();
        let peak = s.stats().bytes_in_use;
        s.reset();
        let stats = s.stats();
        assert_eq!(stats.bytes_in_use, 0);
        assert_eq!(stats.allocation_count, 0);
        assert_eq!(stats.peak_bytes_in_use, peak);
        assert_eq!(stats.largest_free_range, CAP);
        // Old ranges are stale, even once their entries are reused.
        let d = s.allocate(20, 4).unwrap();
        let e = s.allocate(5000, 4).unwrap();
        let before = snapshot(&s);
        for r in [a, big, c] {
            assert_eq!(
                s.free(r),
                Err(AllocError::NotAllocated { offset: r.offset })
            );
        }
        assert_eq!(snapshot(&s), before);
        s.free(d).unwrap();
        s.free(e).unwrap();
        assert_eq!(s.stats().largest_free_range, CAP);
    }

    #[test]
    fn span_table_runs_out() {
        let mut s = slab::<2>();
        let a = s.allocate(16, 1).unwrap();
        let b = s.allocate(64, 1).unwrap();
        let before = snapshot(&s);
        assert_eq!(
            s.allocate(256, 1),
            Err(AllocError::OutOfMetadata { capacity: 2 })
        );
        assert_eq!(
            s.allocate(1024, 1),
            Err(AllocError::OutOfMetadata { capacity: 2 })
        );
        assert_eq!(snapshot(&s), before);
        // Classes with a span keep working.
        let c = s.allocate(10, 1).unwrap();
        s.free(a).unwrap();
        s.free(c).unwrap();
        // A released entry is reused.
        let d = s.allocate(256, 1).unwrap();
        s.free(b).unwrap();
        s.free(d).unwrap();
        assert_eq!(s.stats().largest_free_range, CAP);
    }

    #[test]
    fn backing_out_of_memory_passes_through() {
        // Room for one 256-byte span (16 KiB) and little else.
        let mut s = Slab::<_, 8>::new(FirstFit::new(20_000), &[64, 256]).unwrap();
        let a = s.allocate(256, 1).unwrap();
        let before = snapshot(&s);
        let r = s.allocate(64, 1);
        assert!(matches!(r, Err(AllocError::OutOfMemory { .. })), "{r:?}");
        let r = s.allocate(5000, 1);
        assert!(matches!(r, Err(AllocError::OutOfMemory { .. })), "{r:?}");
        assert_eq!(snapshot(&s), before);
        s.free(a).unwrap();
        assert_eq!(s.stats().largest_free_range, 20_000);
    }

    #[test]
    fn exact_and_smaller_sizes_are_both_checked() {
        let mut s = slab::<4>();
        // One slot asked for exactly the class size, its neighbour for less, then the other
        // way round in the same slots.
        for (first, second) in [(64, 50), (50, 64)] {
            let a = s.allocate(first, 1).unwrap();
            let b = s.allocate(second, 1).unwrap();
            for (r, other) in [(a, second), (b, first)] {
                let forged = Range::new(r.offset, other, r.token());
                assert!(matches!(s.free(forged), Err(AllocError::Mismatch { .. })));
            }
            assert_eq!(s.stats().bytes_in_use, 114);
            s.free(a).unwrap();
            s.free(b).unwrap();
            assert_eq!(s.stats().bytes_in_use, 0);
            assert_eq!(s.stats().peak_bytes_in_use, 114);
        }
    }

    #[test]
    fn refused_calls_keep_the_held_slot() {
        let mut s = Slab::<_, 4>::new(FirstFit::new(CAP), &[64]).unwrap();
        let large = s.allocate(1000, 1).unwrap();
        let [_a, b, c, d] = [(); 4].map(|_| s.allocate(64, 1).unwrap());
        s.free(b).unwrap(); // held
        s.free(c).unwrap(); // gives `b` back to its span, frees `c`
        s.free(d).unwrap(); // held: slots 1 and 2 free in the span, slot 3 held
        let forged = Range::new(large.offset + 16, large.size, large.token());
        let before = snapshot(&s);
        assert!(matches!(
            s.allocate(CAP, 1),
            Err(AllocError::OutOfMemory { .. })
        ));
        assert!(matches!(s.free(forged), Err(AllocError::Mismatch { .. })));
        assert_eq!(snapshot(&s), before);
        let next = s.allocate(64, 1).unwrap();
        assert_eq!(
            next.offset, d.offset,
            "the held slot is still handed out first"
        );
    }

    #[test]
    fn odd_class_sizes_use_multiplication() {
        let mut s = Slab::<_, 4>::new(FirstFit::new(CAP), &[24, 100]).unwrap();
        let rs: [Range; 10] = core::array::from_fn(|_| s.allocate(24, 8).unwrap());
        for (i, r) in rs.iter().enumerate() {
            assert_eq!(r.offset, rs[0].offset + 24 * i as u64);
            assert_eq!(r.offset % 8, 0);
        }
        // 100 = 4 * 25: 4-byte alignment at most; 8 passes through.
        let x = s.allocate(90, 4).unwrap();
        assert_eq!(
            s.spans[((x.token() >> 6) & INDEX_MASK) as usize].slot_size,
            100
        );
        let y = s.allocate(90, 8).unwrap();
        assert_eq!(
            s.spans[((y.token() >> 6) & INDEX_MASK) as usize].class,
            PASS
        );
        for r in rs.into_iter().chain([x, y]) {
            s.free(r).unwrap();
        }
        assert_eq!(s.stats().largest_free_range, CAP);
    }

    #[test]
    fn random_operations_keep_the_contract() {
        let mut s = Slab::<_, 12>::new(FirstFit::new(CAP), &[8, 24, 64, 128]).unwrap();
        let mut live = [Range::new(0, 0, 0); 48];
        let mut len = 0;
        let mut dead = Range::new(0, 1, 0);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..400 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if step % 97 == 96 {
                s.reset();
                len = 0;
            } else if len < live.len() && x % 3 != 0 {
                let size = 1 + (x >> 8) % 160;
                let align = 1 << ((x >> 20) % 7);
                match s.allocate(size, align) {
                    Ok(r) => {
                        assert_eq!((r.size, r.offset % align), (size, 0));
                        assert!(r.end() <= CAP);
                        assert!(live[..len].iter().all(|l| !l.overlaps(&r)));
                        live[len] = r;
                        len += 1;
                    }
                    Err(AllocError::OutOfMetadata { .. } | AllocError::OutOfMemory { .. }) => {}
                    Err(e) => panic!("{e:?}"),
                }
            } else if len > 0 {
                let i = (x >> 8) as usize % len;
                let r = live[i];
                s.free(r).unwrap();
                live[i] = live[len - 1];
                len -= 1;
                dead = r;
            }
            let before = snapshot(&s);
            assert!(s.free(dead).is_err());
            assert_eq!(snapshot(&s), before);
            let stats = s.stats();
            assert_eq!(stats.allocation_count, len as u64);
            assert_eq!(stats.bytes_in_use, live[..len].iter().map(|r| r.size).sum());
        }
        for r in &live[..len] {
            s.free(*r).unwrap();
        }
        assert_eq!(s.stats().largest_free_range, CAP);
        assert_eq!(s.backing().len, 0);
    }
}
