//! Two-level segregated fit (TLSF): a general-purpose allocator of offsets with O(1)
//! allocate and free.
//!
//! # Design
//!
//! * **Out-of-band blocks.** The managed block is never touched. It is cut into physical
//!   blocks, each described by one 32-byte [`Node`] (half a cache line, never straddling
//!   one) of a fixed table of `NODES` entries: offset, size, the indices of its physical
//!   neighbours and its free-list links. A used block keeps its `used` flag in the offset's
//!   low bit, the bytes it holds beyond the requested size (under 16) in the size's low bits,
//!   and its allocation's generation in the free-list link it does not need, so allocating
//!   and freeing touch nothing but nodes. Indices are `u32` with [`NONE`] (0) as the null index,
//!   so node 0 is never a block. Nodes that describe no block are kept on an intrusive stack
//!   (through `next_free`) plus a never-used high-water mark, so getting and putting a node
//!   is O(1). Every null link and counter of an empty allocator is zero: `Tlsf::new(0)` is
//!   all zero bytes, so a `static` device holding one lands in `.bss`, not in flash.
//! * **Two-level size classes.** Every size is a multiple of [`GRANULE`] (16 bytes). Free
//!   blocks sit in one doubly linked list per size class. Below [`SMALL_LIMIT`] (512 bytes)
//!   the classes are linear (one class per granule); above it the first level is the index of
//!   the most significant bit and the second level splits each power-of-two range into
//!   [`SL_COUNT`] (32) equal parts. A `u64` first-level bitmap and one `u32` second-level
//!   bitmap per first level say which lists are non-empty, so a suitable list is found with
//!   two `trailing_zeros`.
//! * **Good fit, then a fallback.** A request is rounded up to the next class boundary before
//!   the bitmap search, so *any* block of the list found fits and no list is ever walked.
//!   Only when that O(1) search finds nothing, the list of the request's own (unrounded)
//!   class is scanned for a block that happens to be large enough. That fallback never runs
//!   while the O(1) path would succeed; it lets the allocator fill the block to the edge.
//! * **Alignment by splitting.** For an alignment above 16 the search asks for
//!   `size + alignment - 16` bytes; the padding in front of the aligned offset is split off as
//!   a free block of its own and the remainder behind the allocation as another, so nothing
//!   is wasted beyond rounding to 16 bytes.
//! * **Coalescing.** A freed block merges with free physical neighbours at once, so no two
//!   free blocks are ever adjacent.
//! * **Tokens.** A [`Range`]'s token is `generation << 32 | node index`, the generation
//!   drawn from a counter bumped by every allocation, so stale, double and forged frees are
//!   recognised in O(1): a stale range is mistaken for a live one only if its node was handed
//!   out again exactly a multiple of 2³² allocations later.

use super::{check_request, AllocError, AllocStats, Range, RangeAllocator};

/// Null node index (node 0 is never used).
const NONE: u32 = 0;
/// log2 of [`GRANULE`].
const GRANULE_LOG2: u32 = 4;
/// Every block's offset and size is a multiple of this many bytes.
const GRANULE: u64 = 1 << GRANULE_LOG2;
/// log2 of [`SL_COUNT`].
const SL_LOG2: u32 = 5;
/// Second-level subdivisions of each first-level (power-of-two) range.
const SL_COUNT: usize = 1 << SL_LOG2;
/// Sizes below this are mapped linearly (first level 0, one class per granule).
const SMALL_LIMIT: u64 = 1 << (SL_LOG2 + GRANULE_LOG2);
/// First-level index of sizes with most significant bit `b >= SL_LOG2 + GRANULE_LOG2` is
/// `b - FL_SHIFT`.
const FL_SHIFT: u32 = SL_LOG2 + GRANULE_LOG2 - 1;
/// First-level classes: the linear one plus one per bit from 9 to 63.
const FL_COUNT: usize = (64 - FL_SHIFT) as usize;

/// First-level classes that cover every `u64` size (56: 7 KiB of list heads).
pub const ALL_FIRST_LEVELS: usize = FL_COUNT;

/// [`Tlsf`]'s default first-level count: enough for any size this target can address, as
/// `usize` does: all 56 on a 64-bit target, 24 (3 KiB of list heads) on a 32-bit one. A
/// 32-bit host managing more device memory than it can address names [`ALL_FIRST_LEVELS`].
pub const DEFAULT_FIRST_LEVELS: usize = first_levels(usize::MAX as u64);

/// The first-level classes a [`Tlsf`] needs to manage `max_capacity` bytes (at least 1, at
/// most [`ALL_FIRST_LEVELS`]): a `const fn`, for the type's second parameter.
///
/// ```
/// use hal_core::memory::alloc::{first_levels, RangeAllocator, Tlsf};
///
/// // 64 KiB of device memory: 9 first levels, 1.1 KiB of list heads instead of 7 KiB.
/// let mut tlsf = Tlsf::<16, { first_levels(64 << 10) }>::new(64 << 10);
/// let a = tlsf.allocate(60 << 10, 16)?;
/// tlsf.free(a)?;
/// # Ok::<(), hal_core::memory::alloc::AllocError>(())
/// ```
pub const fn first_levels(max_capacity: u64) -> usize {
    if max_capacity < SMALL_LIMIT {
        return 1;
    }
    // Blocks of up to `max_capacity` bytes: the largest's first level is its top bit's.
    let top = 63 - max_capacity.leading_zeros();
    let levels = (top - FL_SHIFT + 1) as usize;
    if levels > FL_COUNT {
        FL_COUNT
    } else {
        levels
    }
}

/// Bit of [`Node::start`] set while the block is handed out.
const USED: u64 = 1;
/// Bits of [`Node::extent`] holding a used block's slack (its size less the requested size).
const SLACK: u64 = GRANULE - 1;

/// One physical block of the managed range, free or used, or an unused table entry.
///
/// Invariants: the physical blocks tile `0..usable` in `prev_phys`/`next_phys` order; a free
/// block is in exactly the list of its size class, is never next to another free block, and
/// has no flag or slack bits; an unused entry's `start` is 0 (not `USED`); a used block's
/// generation has been handed out in exactly one token, its own.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Node {
    /// Start of the block, a multiple of [`GRANULE`], with [`USED`] set while handed out.
    start: u64,
    /// Length of the block, a non-zero multiple of [`GRANULE`]; a used block adds its slack
    /// (under [`GRANULE`]) in the low bits.
    extent: u64,
    /// Physical neighbour before, or [`NONE`].
    prev_phys: u32,
    /// Physical neighbour after, or [`NONE`].
    next_phys: u32,
    /// Previous block in the free list; for a used block, its allocation's generation.
    prev_free: u32,
    /// Next block in the free list; for an unused entry, the next unused entry.
    next_free: u32,
}

impl Node {
    const EMPTY: Node = Node {
        start: 0,
        extent: 0,
        prev_phys: NONE,
        next_phys: NONE,
        prev_free: NONE,
        next_free: NONE,
    };

    /// Start of the block.
    #[inline(always)]
    const fn offset(&self) -> u64 {
        self.start & !USED
    }

    /// Whether the block is handed out.
    #[inline(always)]
    const fn used(&self) -> bool {
        self.start & USED != 0
    }

    /// Length of the block.
    #[inline(always)]
    const fn size(&self) -> u64 {
        self.extent & !SLACK
    }

    /// The size asked for, for a used block (what `free` must be given back).
    #[inline(always)]
    const fn requested(&self) -> u64 {
        self.size() - (self.extent & SLACK)
    }
}

/// The size class `(first level, second level)` that holds blocks of `size` bytes
/// (`size` a non-zero multiple of [`GRANULE`]).
#[inline(always)]
const fn mapping_insert(size: u64) -> (usize, usize) {
    if size < SMALL_LIMIT {
        (0, (size >> GRANULE_LOG2) as usize)
    } else {
        let msb = 63 - size.leading_zeros();
        let fl = msb - FL_SHIFT;
        let sl = ((size >> (msb - SL_LOG2)) as usize) ^ SL_COUNT;
        (fl as usize, sl)
    }
}

/// The first class whose every block holds at least `size` bytes, or `None` if there is
/// none (`size` a non-zero multiple of [`GRANULE`]).
#[inline(always)]
const fn mapping_search(size: u64) -> Option<(usize, usize)> {
    if size < SMALL_LIMIT {
        // Linear classes hold one size each: exact.
        Some((0, (size >> GRANULE_LOG2) as usize))
    } else {
        let msb = 63 - size.leading_zeros();
        let round = (1u64 << (msb - SL_LOG2)) - 1;
        match size.checked_add(round) {
            Some(rounded) => Some(mapping_insert(rounded)),
            None => None,
        }
    }
}

/// `x` rounded up to `align` (a power of two), if that fits in a u64.
#[inline(always)]
const fn align_up(x: u64, align: u64) -> Option<u64> {
    match x.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// Two-level segregated fit over a block of `capacity` bytes, with room for `NODES` physical
/// blocks (free or used) of metadata and `FL` first-level size classes.
///
/// O(1) [`allocate`](RangeAllocator::allocate) and [`free`](RangeAllocator::free), any
/// power-of-two alignment, `u64` offsets. Offsets and sizes are kept in multiples of 16
/// bytes; a capacity that is not a multiple of 16 loses its last partial granule. One live
/// allocation needs up to three nodes while its neighbours are free, so size `NODES` at about
/// twice the number of live ranges expected, plus a few.
///
/// Each first level holds 32 list heads (128 bytes) and covers one power of two of block
/// sizes: `FL` levels manage up to `2^(FL + 8) - 16` bytes, and a larger capacity is cut to
/// that. The default, [`DEFAULT_FIRST_LEVELS`], covers every size the target can address
/// (7 KiB of list heads on a 64-bit target, 3 KiB on a 32-bit one); a small memory needs
/// far fewer ([`first_levels`] says how many): `Tlsf<16, { first_levels(64 << 10) }>` keeps
/// 1.1 KiB of heads for 64 KiB.
///
/// ```
/// use hal_core::memory::alloc::{RangeAllocator, Tlsf};
///
/// static HEAP: Tlsf<32> = Tlsf::new(1 << 16); // `const`: fits in a static
/// let mut tlsf = HEAP.clone();
/// let a = tlsf.allocate(100, 4096)?;
/// assert_eq!(a.offset % 4096, 0);
/// tlsf.free(a)?;
/// # Ok::<(), hal_core::memory::alloc::AllocError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Tlsf<const NODES: usize, const FL: usize = DEFAULT_FIRST_LEVELS> {
    /// The block table.
    nodes: [Node; NODES],
    /// Bit `f` set iff some list of first level `f` is non-empty.
    fl_bitmap: u64,
    /// Bit `s` of entry `f` set iff list `(f, s)` is non-empty.
    sl_bitmap: [u32; FL],
    /// Head of each free list; [`NONE`] when empty.
    heads: [[u32; SL_COUNT]; FL],
    /// Top of the stack of recycled unused nodes.
    spare_head: u32,
    /// Nodes above this index have never been taken since the last reset.
    fresh: u32,
    /// Nodes that describe a block (at most [`Self::LIMIT`]).
    taken: u32,
    /// Capacity as given.
    capacity: u64,
    /// Capacity rounded down to [`GRANULE`] and cut to what `FL` first levels index: the
    /// part handed out.
    usable: u64,
    /// Sum of requested sizes of live ranges.
    in_use: u64,
    /// The largest `in_use` seen before its latest growth: the peak is `max(peak, in_use)`,
    /// folded in just before `in_use` falls, so allocating only adds.
    peak: u64,
    /// Live ranges.
    live: u64,
    /// Generation of the next allocation.
    next_gen: u32,
}

impl<const NODES: usize, const FL: usize> Tlsf<NODES, FL> {
    /// Nodes that can describe blocks: `NODES` less node 0 (the null index), capped to `u32`.
    const LIMIT: u32 = if NODES == 0 {
        0
    } else if NODES > u32::MAX as usize {
        u32::MAX - 1
    } else {
        NODES as u32 - 1
    };

    /// The most bytes `FL` first levels can hand out: block sizes below `2^(FL + 8)`, in
    /// granules.
    const MAX_USABLE: u64 = if FL == 0 {
        0
    } else if FL >= FL_COUNT {
        !(GRANULE - 1)
    } else {
        (1 << (FL as u32 + FL_SHIFT)) - GRANULE
    };

    /// An empty allocator over `capacity` bytes. `const`, so it can initialise a `static`.
    ///
    /// A capacity below 16 bytes, `NODES < 2` or `FL == 0` gives an allocator that refuses
    /// every request cleanly; one above what `FL` first levels index is cut to it.
    pub const fn new(capacity: u64) -> Self {
        const {
            assert!(FL <= FL_COUNT, "more first levels than u64 sizes need");
        }
        let usable = capacity & !(GRANULE - 1);
        let mut this = Self {
            nodes: [Node::EMPTY; NODES],
            fl_bitmap: 0,
            sl_bitmap: [0; FL],
            heads: [[NONE; SL_COUNT]; FL],
            spare_head: NONE,
            fresh: 0,
            taken: 0,
            capacity,
            usable: if usable > Self::MAX_USABLE {
                Self::MAX_USABLE
            } else {
                usable
            },
            in_use: 0,
            peak: 0,
            live: 0,
            next_gen: 0,
        };
        if this.usable != 0 && Self::LIMIT != 0 {
            // Same as `reset`'s first block, spelled out for const evaluation.
            this.nodes[1].extent = this.usable;
            this.fresh = 1;
            this.taken = 1;
            let (fl, sl) = mapping_insert(this.usable);
            this.heads[fl][sl] = 1;
            this.fl_bitmap = 1 << fl;
            this.sl_bitmap[fl] = 1 << sl;
        }
        this
    }

    /// Unused nodes (recycled plus never taken).
    #[inline(always)]
    fn spare(&self) -> u32 {
        Self::LIMIT - self.taken
    }

    /// Takes an unused node (the caller has checked [`Self::spare`]).
    #[inline(always)]
    fn take_node(&mut self) -> u32 {
        self.taken += 1;
        if self.spare_head != NONE {
            let idx = self.spare_head;
            self.spare_head = self.nodes[idx as usize].next_free;
            idx
        } else {
            self.fresh += 1;
            self.fresh
        }
    }

    /// Puts a node that describes no block any more back on the spare stack (clearing its
    /// `used` flag, so no token names it).
    #[inline(always)]
    fn put_node(&mut self, idx: u32) {
        self.nodes[idx as usize].start = 0;
        self.nodes[idx as usize].next_free = self.spare_head;
        self.spare_head = idx;
        self.taken -= 1;
    }

    /// Pushes free block `idx` onto the list of its size class.
    #[inline(always)]
    fn insert_free(&mut self, idx: u32) {
        // A free block's extent is its size.
        let (fl, sl) = mapping_insert(self.nodes[idx as usize].extent);
        let head = self.heads[fl][sl];
        {
            let node = &mut self.nodes[idx as usize];
            node.prev_free = NONE;
            node.next_free = head;
        }
        if head != NONE {
            self.nodes[head as usize].prev_free = idx;
        }
        self.heads[fl][sl] = idx;
        self.fl_bitmap |= 1 << fl;
        self.sl_bitmap[fl] |= 1 << sl;
    }

    /// Unlinks free block `idx` from its list.
    #[inline(always)]
    fn remove_free(&mut self, idx: u32) {
        let node = &self.nodes[idx as usize];
        let (prev, next, size) = (node.prev_free, node.next_free, node.extent);
        if prev != NONE {
            self.nodes[prev as usize].next_free = next;
        } else {
            let (fl, sl) = mapping_insert(size);
            self.heads[fl][sl] = next;
            if next == NONE {
                self.sl_bitmap[fl] &= !(1 << sl);
                if self.sl_bitmap[fl] == 0 {
                    self.fl_bitmap &= !(1 << fl);
                }
            }
        }
        if next != NONE {
            self.nodes[next as usize].prev_free = prev;
        }
    }

    /// O(1): the head of the first non-empty class at or above the one `size` rounds up to,
    /// so a free block of at least `size` bytes, with its class. Changes nothing.
    #[inline(always)]
    fn find_good_fit(&self, size: u64) -> Option<(usize, usize, u32)> {
        let (mut fl, sl) = mapping_search(size)?;
        // A class above the last first level holds no block (the fallback may still find
        // one in the request's own class).
        let &sl_bits = self.sl_bitmap.get(fl)?;
        // `fl < FL <= 56` and `sl < 32`, so the shifts are in range.
        let mut sl_map = sl_bits & (u32::MAX << sl);
        if sl_map == 0 {
            let fl_map = self.fl_bitmap & (u64::MAX << (fl + 1));
            if fl_map == 0 {
                return None;
            }
            fl = fl_map.trailing_zeros() as usize;
            sl_map = self.sl_bitmap[fl];
        }
        let sl = sl_map.trailing_zeros() as usize;
        Some((fl, sl, self.heads[fl][sl]))
    }

    /// Unlinks the head of the non-empty list `(fl, sl)`.
    #[inline(always)]
    fn pop_head(&mut self, fl: usize, sl: usize, head: u32) {
        let next = self.nodes[head as usize].next_free;
        self.heads[fl][sl] = next;
        if next != NONE {
            self.nodes[next as usize].prev_free = NONE;
        } else {
            self.sl_bitmap[fl] &= !(1 << sl);
            if self.sl_bitmap[fl] == 0 {
                self.fl_bitmap &= !(1 << fl);
            }
        }
    }

    /// The fallback, run only when [`find_good_fit`](Self::find_good_fit) found nothing:
    /// walks the one list of `class_size`'s own class for a block that holds `size` bytes at
    /// `alignment`.
    #[cold]
    fn find_in_own_class(&self, class_size: u64, size: u64, alignment: u64) -> Option<u32> {
        let (fl, sl) = mapping_insert(class_size);
        let mut cur = self.heads[fl][sl];
        while cur != NONE {
            let node = &self.nodes[cur as usize];
            if Self::fits(node, size, alignment) {
                return Some(cur);
            }
            cur = node.next_free;
        }
        None
    }

    /// Whether `size` bytes aligned to `alignment` fit inside block `node`.
    #[inline(always)]
    fn fits(node: &Node, size: u64, alignment: u64) -> bool {
        // A free block: `start` and `extent` carry no flags.
        match align_up(node.start, alignment) {
            Some(start) => match start.checked_add(size) {
                // `offset + size <= usable` never overflows.
                Some(end) => end <= node.start + node.extent,
                None => false,
            },
            None => false,
        }
    }

    /// Size of the largest free block (scans one list).
    fn largest_free(&self) -> u64 {
        if self.fl_bitmap == 0 {
            return 0;
        }
        let fl = 63 - self.fl_bitmap.leading_zeros() as usize;
        let Some(&sl_map) = self.sl_bitmap.get(fl) else {
            return 0;
        };
        let sl = 31 - sl_map.leading_zeros() as usize;
        let mut largest = 0;
        let mut cur = self.heads[fl][sl];
        while cur != NONE {
            let node = &self.nodes[cur as usize];
            largest = largest.max(node.extent);
            cur = node.next_free;
        }
        largest
    }

    #[cold]
    fn out_of_memory(&self, size: u64, alignment: u64) -> AllocError {
        AllocError::OutOfMemory {
            size,
            alignment,
            largest_free_range: self.largest_free(),
        }
    }
}

impl<const NODES: usize, const FL: usize> Tlsf<NODES, FL> {
    /// Takes a spare node for a free, unlisted block at `offset` of `size` bytes that
    /// follows `at` physically, and links it between `at` and `at`'s old successor. The
    /// caller shrinks `at` (or has already) so the two do not overlap. Needs a spare node.
    #[inline]
    fn split_after(&mut self, at: u32, offset: u64, size: u64) -> u32 {
        let new = self.take_node();
        let next = self.nodes[at as usize].next_phys;
        // The free-list links are set by whoever lists the block, or hold a generation.
        let node = &mut self.nodes[new as usize];
        node.start = offset;
        node.extent = size;
        node.prev_phys = at;
        node.next_phys = next;
        if next != NONE {
            self.nodes[next as usize].prev_phys = new;
        }
        self.nodes[at as usize].next_phys = new;
        new
    }
}

impl<const NODES: usize, const FL: usize> RangeAllocator for Tlsf<NODES, FL> {
    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline]
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        check_request(size, alignment, self.capacity)?;
        // Rounded to the granule; `None` or above `usable` means it cannot fit.
        let block_size = match size.checked_add(GRANULE - 1) {
            Some(s) if s & !(GRANULE - 1) <= self.usable => s & !(GRANULE - 1),
            _ => return Err(self.out_of_memory(size, alignment)),
        };
        let align = alignment.max(GRANULE);
        // Offsets are multiples of 16, so at most `align - 16` bytes of padding are needed.
        let needed = block_size.checked_add(align - GRANULE);
        let found = match needed {
            Some(n) => self.find_good_fit(n),
            None => None,
        };
        // `class`: the list `idx` heads, when the O(1) search found it.
        let (idx, class) = match found {
            Some((fl, sl, idx)) => (idx, Some((fl, sl))),
            None => {
                let class_size = match needed {
                    Some(n) if n <= self.usable => n,
                    _ => self.usable,
                };
                let mut found = self.find_in_own_class(class_size, block_size, align);
                if found.is_none() && align > GRANULE {
                    // A block between the unpadded and the padded size may be aligned
                    // well enough: try the unpadded size's class too.
                    found = self.find_in_own_class(block_size, block_size, align);
                }
                match found {
                    Some(idx) => (idx, None),
                    None => return Err(self.out_of_memory(size, alignment)),
                }
            }
        };

        // A free block: `start` and `extent` carry no flags.
        let (offset, extent) = (
            self.nodes[idx as usize].start,
            self.nodes[idx as usize].extent,
        );
        // The block holds `block_size` at `align`: the search guarantees it.
        let start = if align == GRANULE {
            offset
        } else {
            match align_up(offset, align) {
                Some(s) => s,
                // Unreachable: both searches only return blocks that fit.
                None => return Err(self.out_of_memory(size, alignment)),
            }
        };
        let lead = start - offset;
        let tail = extent - lead - block_size;
        let wanted = (lead != 0) as u32 + (tail != 0) as u32;
        if wanted > self.spare() {
            return Err(AllocError::OutOfMetadata {
                capacity: Self::LIMIT,
            });
        }

        // From here on nothing fails.
        match class {
            Some((fl, sl)) => self.pop_head(fl, sl, idx),
            None => self.remove_free(idx),
        }
        let used = if lead != 0 {
            // `idx` stays the leading free block; a new node takes the rest.
            let u = self.split_after(idx, start, extent - lead);
            self.nodes[idx as usize].extent = lead;
            self.insert_free(idx);
            u
        } else {
            idx
        };
        if tail != 0 {
            let t = self.split_after(used, start + block_size, tail);
            self.insert_free(t);
        }
        let gen = self.next_gen;
        self.next_gen = gen.wrapping_add(1);
        let node = &mut self.nodes[used as usize];
        node.start = start | USED;
        // `block_size - size < GRANULE`: the slack fits in the low bits.
        node.extent = block_size | (block_size - size);
        node.prev_free = gen;
        self.in_use += size;
        self.live += 1;
        Ok(Range::new(
            start,
            size,
            (u64::from(gen) << 32) | u64::from(used),
        ))
    }

    #[inline]
    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let token = range.token();
        let idx = token as u32;
        let gen = (token >> 32) as u32;
        let node = match self.nodes.get(idx as usize) {
            Some(node) if node.used() && node.prev_free == gen => *node,
            _ => {
                return Err(AllocError::NotAllocated {
                    offset: range.offset,
                })
            }
        };
        if node.offset() != range.offset || node.requested() != range.size {
            return Err(AllocError::Mismatch {
                offset: range.offset,
                size: range.size,
                expected_offset: node.offset(),
                expected_size: node.requested(),
            });
        }
        if self.in_use > self.peak {
            self.peak = self.in_use;
        }
        self.in_use -= range.size;
        self.live -= 1;

        let mut cur = idx;
        let mut offset = range.offset;
        let mut size = node.size();
        let mut next = node.next_phys;

        // Merge with the block before: it absorbs this one.
        let prev = node.prev_phys;
        if prev != NONE && !self.nodes[prev as usize].used() {
            self.remove_free(prev);
            self.put_node(cur);
            cur = prev;
            let p = &self.nodes[prev as usize];
            offset = p.start;
            size += p.extent;
        }
        // Merge with the block after: this one absorbs it.
        if next != NONE && !self.nodes[next as usize].used() {
            self.remove_free(next);
            let n = &self.nodes[next as usize];
            size += n.extent;
            let after = n.next_phys;
            self.put_node(next);
            next = after;
        }
        // The allocation ends: `start` loses its `used` flag, `extent` its slack.
        {
            let n = &mut self.nodes[cur as usize];
            n.start = offset;
            n.extent = size;
            n.next_phys = next;
        }
        if next != NONE {
            self.nodes[next as usize].prev_phys = cur;
        }
        self.insert_free(cur);
        Ok(())
    }

    fn reset(&mut self) {
        if self.in_use > self.peak {
            self.peak = self.in_use;
        }
        // No token may name a node from before: clear every `used` flag.
        let fresh = self.fresh as usize;
        for node in self.nodes.iter_mut().take(fresh + 1) {
            node.start = 0;
        }
        self.fl_bitmap = 0;
        self.sl_bitmap = [0; FL];
        self.heads = [[NONE; SL_COUNT]; FL];
        self.spare_head = NONE;
        self.fresh = 0;
        self.taken = 0;
        self.in_use = 0;
        self.live = 0;
        if self.usable != 0 && Self::LIMIT != 0 {
            let idx = self.take_node();
            self.nodes[idx as usize] = Node {
                extent: self.usable,
                ..Node::EMPTY
            };
            self.insert_free(idx);
        }
    }

    fn stats(&self) -> AllocStats {
        AllocStats {
            capacity: self.capacity,
            bytes_in_use: self.in_use,
            peak_bytes_in_use: self.peak.max(self.in_use),
            allocation_count: self.live,
            largest_free_range: self.largest_free(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the physical list and the free lists and checks every invariant.
    fn check<const N: usize, const F: usize>(t: &Tlsf<N, F>) {
        let mut cur = if t.usable != 0 && Tlsf::<N, F>::LIMIT != 0 {
            // Find the block at offset 0: the one with no previous neighbour.
            (1..=t.fresh)
                .find(|&i| {
                    let n = &t.nodes[i as usize];
                    n.size() != 0 && n.offset() == 0 && n.prev_phys == NONE && is_block(t, i)
                })
                .expect("first block")
        } else {
            NONE
        };
        let mut offset = 0;
        let mut prev = NONE;
        let mut prev_free = false;
        let mut blocks = 0;
        let mut free_blocks = 0;
        let mut in_use = 0;
        let mut live = 0;
        while cur != NONE {
            let n = &t.nodes[cur as usize];
            assert_eq!(n.offset(), offset);
            assert_eq!(n.prev_phys, prev);
            assert!(n.size() > 0 && n.size() % GRANULE == 0);
            if n.used() {
                in_use += n.requested();
                live += 1;
                assert!(n.requested() <= n.size());
            } else {
                assert!(!prev_free, "adjacent free blocks");
                assert_eq!(n.extent & SLACK, 0, "a free block carries no slack");
                free_blocks += 1;
            }
            prev_free = !n.used();
            offset += n.size();
            prev = cur;
            cur = n.next_phys;
            blocks += 1;
        }
        assert_eq!(offset, t.usable);
        assert_eq!(in_use, t.in_use);
        assert_eq!(live, t.live);
        assert_eq!(blocks, t.taken);
        let mut listed = 0;
        assert_eq!(t.fl_bitmap >> F, 0);
        for fl in 0..F {
            assert_eq!(t.fl_bitmap >> fl & 1 == 1, t.sl_bitmap[fl] != 0);
            for sl in 0..SL_COUNT {
                let head = t.heads[fl][sl];
                assert_eq!(t.sl_bitmap[fl] >> sl & 1 == 1, head != NONE);
                let mut p = NONE;
                let mut c = head;
                while c != NONE {
                    let n = &t.nodes[c as usize];
                    assert!(!n.used());
                    assert_eq!(mapping_insert(n.size()), (fl, sl));
                    assert_eq!(n.prev_free, p);
                    listed += 1;
                    p = c;
                    c = n.next_free;
                }
            }
        }
        assert_eq!(listed, free_blocks);
        // Unused entries carry no `used` flag: no token names them.
        let mut c = t.spare_head;
        while c != NONE {
            assert!(!t.nodes[c as usize].used());
            c = t.nodes[c as usize].next_free;
        }
        for n in &t.nodes[t.fresh as usize + 1..] {
            assert!(!n.used());
        }
    }

    fn is_block<const N: usize, const F: usize>(t: &Tlsf<N, F>, idx: u32) -> bool {
        let mut c = t.spare_head;
        while c != NONE {
            if c == idx {
                return false;
            }
            c = t.nodes[c as usize].next_free;
        }
        true
    }

    #[test]
    fn mapping_is_consistent() {
        let mut size = GRANULE;
        while size < 1 << 20 {
            let (fl, sl) = mapping_insert(size);
            assert!(fl < FL_COUNT && sl < SL_COUNT);
            let (sfl, ssl) = mapping_search(size).unwrap();
            assert!((sfl, ssl) >= (fl, sl));
            // Every size in the searched class is at least `size`.
            let mut s = size;
            while mapping_insert(s) < (sfl, ssl) {
                s += GRANULE;
            }
            assert!(s >= size);
            size += GRANULE * (1 + size / 512);
        }
        assert_eq!(mapping_insert(!15), (FL_COUNT - 1, SL_COUNT - 1));
        assert_eq!(mapping_search(!15), None);
    }

    #[test]
    fn const_in_static() {
        static A: Tlsf<8> = Tlsf::new(4096);
        let mut t = A.clone();
        check(&t);
        let r = t.allocate(10, 1).unwrap();
        assert_eq!(r.offset, 0);
        t.free(r).unwrap();
        check(&t);
    }

    #[test]
    fn split_and_coalesce() {
        let mut t = Tlsf::<16>::new(1024);
        let a = t.allocate(100, 16).unwrap();
        let b = t.allocate(50, 16).unwrap();
        let c = t.allocate(200, 16).unwrap();
        check(&t);
        assert_eq!((a.offset, b.offset, c.offset), (0, 112, 176));
        assert_eq!(t.stats().bytes_in_use, 350);
        assert_eq!(t.stats().allocation_count, 3);
        assert_eq!(t.stats().largest_free_range, 1024 - 176 - 208);
        // Free the middle, then the neighbours: one block again.
        t.free(b).unwrap();
        check(&t);
        t.free(a).unwrap();
        check(&t);
        assert_eq!(t.stats().largest_free_range, 640);
        // a and b merged into one 176-byte block at 0.
        assert_eq!(t.nodes[a.token() as usize].size(), 176);
        t.free(c).unwrap();
        check(&t);
        let s = t.stats();
        assert_eq!(s.largest_free_range, 1024);
        assert_eq!(
            (s.bytes_in_use, s.allocation_count, s.peak_bytes_in_use),
            (0, 0, 350)
        );
        assert_eq!(t.spare(), 14);
        // The freed hole is reused.
        let d = t.allocate(1024, 16).unwrap();
        assert_eq!(d.offset, 0);
        t.free(d).unwrap();
    }

    #[test]
    fn alignment_up_to_1_mib() {
        let mut t = Tlsf::<64>::new(8 << 20);
        let mut live = [Range::new(0, 0, 0); 24];
        let mut n = 0;
        for (i, shift) in (0..=20).enumerate() {
            let align = 1u64 << shift;
            let r = t.allocate(1 + i as u64 * 37, align).unwrap();
            assert_eq!(r.offset % align, 0);
            assert_eq!(r.size, 1 + i as u64 * 37);
            for other in &live[..n] {
                assert!(!r.overlaps(other));
            }
            live[n] = r;
            n += 1;
            check(&t);
        }
        let r = t.allocate(4096, 1 << 16).unwrap();
        assert_eq!(r.offset % (1 << 16), 0);
        live[n] = r;
        n += 1;
        for r in live[..n].iter().rev() {
            t.free(*r).unwrap();
            check(&t);
        }
        assert_eq!(t.stats().largest_free_range, 8 << 20);
        // Alignment larger than the block still works at offset 0.
        let r = t.allocate(64, 1 << 63).unwrap();
        assert_eq!(r.offset, 0);
        t.free(r).unwrap();
    }

    #[test]
    fn aligned_fallback_finds_exact_fit() {
        // 1 MiB free, nothing else: a 1 MiB request aligned to 1 MiB at offset 0 must work
        // even though size + alignment - 16 exceeds the block.
        let mut t = Tlsf::<4>::new(1 << 20);
        let r = t.allocate(1 << 20, 1 << 20).unwrap();
        assert_eq!(r.offset, 0);
        assert!(t.allocate(16, 16).is_err());
        t.free(r).unwrap();
        check(&t);
    }

    #[test]
    fn large_capacity() {
        const TIB: u64 = 1 << 40;
        let mut t = Tlsf::<16>::new(TIB);
        let a = t.allocate(5 << 30, 1 << 20).unwrap();
        let b = t.allocate(600 << 30, 1 << 30).unwrap();
        let c = t.allocate(300 << 30, 4096).unwrap();
        check(&t);
        assert!(b.offset >= 4 << 30 && b.offset % (1 << 30) == 0);
        assert!(c.end() <= TIB);
        assert_eq!(t.stats().bytes_in_use, 905 << 30);
        assert!(matches!(
            t.allocate(500 << 30, 16),
            Err(AllocError::OutOfMemory { .. })
        ));
        t.free(b).unwrap();
        t.free(a).unwrap();
        t.free(c).unwrap();
        check(&t);
        assert_eq!(t.stats().largest_free_range, TIB);
        let whole = t.allocate(TIB, 1 << 40).unwrap();
        assert_eq!(whole.offset, 0);
        t.free(whole).unwrap();
        // Near the top of the u64 range.
        let mut t = Tlsf::<8>::new(u64::MAX);
        let r = t.allocate(1 << 63, 1 << 63).unwrap();
        assert_eq!(r.offset, 0);
        // size + alignment - 16 just fits the remaining block of 2^63 - 16 bytes, which the
        // rounded-up search misses and the fallback finds.
        let s = t.allocate(1 << 62, 1 << 62).unwrap();
        assert_eq!(s.offset, 1 << 63);
        check(&t);
        t.free(r).unwrap();
        t.free(s).unwrap();
        assert_eq!(t.stats().largest_free_range, !15);
        assert!(matches!(
            t.allocate(u64::MAX - 14, 1),
            Err(AllocError::OutOfMemory { .. })
        ));
        let all = t.allocate(u64::MAX - 15, 16).unwrap();
        assert_eq!(all.offset, 0);
        check(&t);
    }

    #[test]
    fn out_of_metadata_changes_nothing() {
        // Node 0 is the null index: three nodes for blocks.
        let mut t = Tlsf::<4>::new(4096);
        let a = t.allocate(16, 16).unwrap(); // nodes: a, tail
        let b = t.allocate(16, 16).unwrap(); // nodes: a, b, tail
        check(&t);
        let before = t.stats();
        let err = t.allocate(16, 16);
        assert_eq!(err, Err(AllocError::OutOfMetadata { capacity: 3 }));
        assert_eq!(t.stats(), before);
        check(&t);
        // Aligned request needing padding and a tail: still refused, nothing changed.
        assert_eq!(
            t.allocate(16, 1024),
            Err(AllocError::OutOfMetadata { capacity: 3 })
        );
        check(&t);
        // Taking the whole tail needs no new node.
        let c = t.allocate(4096 - 32, 16).unwrap();
        check(&t);
        for r in [b, a, c] {
            t.free(r).unwrap();
            check(&t);
        }
        assert_eq!(t.stats().largest_free_range, 4096);
    }

    #[test]
    fn degenerate_allocators_refuse_cleanly() {
        let mut t = Tlsf::<0>::new(4096);
        assert_eq!(t.capacity(), 4096);
        assert!(matches!(
            t.allocate(16, 16),
            Err(AllocError::OutOfMemory { .. })
        ));
        t.reset();
        assert_eq!(t.stats().largest_free_range, 0);
        let mut t = Tlsf::<8>::new(15);
        assert_eq!(t.capacity(), 15);
        assert!(matches!(
            t.allocate(8, 1),
            Err(AllocError::OutOfMemory { .. })
        ));
        t.reset();
        check(&t);
        let mut t = Tlsf::<8>::new(0);
        assert_eq!(
            t.allocate(1, 1),
            Err(AllocError::TooLarge {
                size: 1,
                capacity: 0
            })
        );
        // Capacity not a multiple of 16: the tail granule is not used.
        let mut t = Tlsf::<8>::new(100);
        assert!(t.allocate(100, 1).is_err());
        let r = t.allocate(96, 1).unwrap();
        t.free(r).unwrap();
        assert_eq!(t.stats().largest_free_range, 96);
    }

    #[test]
    fn bad_requests() {
        let mut t = Tlsf::<8>::new(4096);
        assert_eq!(t.allocate(0, 16), Err(AllocError::ZeroSize));
        assert_eq!(
            t.allocate(16, 3),
            Err(AllocError::InvalidAlignment { alignment: 3 })
        );
        assert_eq!(
            t.allocate(4097, 16),
            Err(AllocError::TooLarge {
                size: 4097,
                capacity: 4096
            })
        );
        check(&t);
    }

    #[test]
    fn bad_frees() {
        let mut t = Tlsf::<16>::new(4096);
        let a = t.allocate(100, 16).unwrap();
        let b = t.allocate(100, 16).unwrap();
        // Wrong offset or size with a live token.
        let wrong = Range::new(a.offset + 16, a.size, a.token());
        assert_eq!(
            t.free(wrong),
            Err(AllocError::Mismatch {
                offset: a.offset + 16,
                size: 100,
                expected_offset: a.offset,
                expected_size: 100
            })
        );
        let wrong = Range::new(a.offset, 99, a.token());
        assert!(matches!(t.free(wrong), Err(AllocError::Mismatch { .. })));
        // Forged tokens: out of bounds, unused node, wrong generation.
        for token in [u64::MAX, 15, 1000, a.token() + (1 << 32)] {
            assert_eq!(
                t.free(Range::new(a.offset, a.size, token)),
                Err(AllocError::NotAllocated { offset: a.offset })
            );
        }
        // A free block's node.
        let free_node = t.nodes[a.token() as usize].next_phys;
        let free_node = t.nodes[free_node as usize].next_phys;
        assert!(!t.nodes[free_node as usize].used());
        assert!(t
            .free(Range::new(
                b.end().next_multiple_of(16),
                16,
                u64::from(free_node)
            ))
            .is_err());
        check(&t);
        // Double free.
        t.free(a).unwrap();
        assert_eq!(
            t.free(a),
            Err(AllocError::NotAllocated { offset: a.offset })
        );
        // A's node reused: the old range is stale.
        let c = t.allocate(100, 16).unwrap();
        assert_eq!(c.offset, a.offset);
        assert_ne!(c.token(), a.token());
        assert_eq!(
            t.free(a),
            Err(AllocError::NotAllocated { offset: a.offset })
        );
        check(&t);
        // Stale after reset.
        t.reset();
        check(&t);
        for r in [b, c] {
            assert_eq!(
                t.free(r),
                Err(AllocError::NotAllocated { offset: r.offset })
            );
        }
        let s = t.stats();
        assert_eq!(
            (s.bytes_in_use, s.allocation_count, s.peak_bytes_in_use),
            (0, 0, 200)
        );
        assert_eq!(s.largest_free_range, 4096);
        // After reset the same offset comes back with a fresh token.
        let d = t.allocate(100, 16).unwrap();
        assert_eq!(d.offset, 0);
        assert_eq!(
            t.free(c),
            Err(AllocError::NotAllocated { offset: c.offset })
        );
        t.free(d).unwrap();
    }

    #[test]
    fn first_levels_cover_the_capacity() {
        assert_eq!(first_levels(0), 1);
        assert_eq!(first_levels(SMALL_LIMIT - 1), 1);
        assert_eq!(first_levels(SMALL_LIMIT), 2);
        assert_eq!(first_levels(64 << 10), 9);
        assert_eq!(first_levels(1 << 32), 25);
        assert_eq!(first_levels(u64::MAX), ALL_FIRST_LEVELS);
        assert_eq!(
            DEFAULT_FIRST_LEVELS,
            if usize::BITS == 32 { 24 } else { 56 }
        );
        // Exactly enough: the capacity fits, one first level less would cut it.
        for cap in [
            SMALL_LIMIT - 16,
            SMALL_LIMIT,
            4096,
            (64 << 10) - 16,
            64 << 10,
            5 << 30,
        ] {
            let fl = first_levels(cap);
            assert!(cap & !(GRANULE - 1) <= (1u64 << (fl as u32 + FL_SHIFT)) - GRANULE);
            assert!(fl == 1 || cap >= (1u64 << (fl as u32 - 1 + FL_SHIFT)) - GRANULE);
        }
    }

    #[test]
    fn few_first_levels_manage_a_small_block() {
        const FL: usize = first_levels(4096);
        let mut t = Tlsf::<16, FL>::new(4096);
        assert_eq!(
            (FL, core::mem::size_of_val(&t.heads)),
            (5, 5 * SL_COUNT * 4)
        );
        check(&t);
        let whole = t.allocate(4096, 16).unwrap();
        check(&t);
        t.free(whole).unwrap();
        let a = t.allocate(1000, 256).unwrap();
        let b = t.allocate(2000, 16).unwrap();
        assert_eq!(a.offset % 256, 0);
        check(&t);
        t.free(a).unwrap();
        t.free(b).unwrap();
        check(&t);
        assert_eq!(t.stats().largest_free_range, 4096);
        // All zero bytes when empty, as for the full table.
        let empty = Tlsf::<4, FL>::new(0);
        assert_eq!(
            (empty.usable, empty.fl_bitmap, empty.heads),
            (0, 0, [[NONE; SL_COUNT]; FL])
        );
    }

    #[test]
    fn a_capacity_past_the_first_levels_is_cut() {
        // Two first levels index blocks below 1 KiB: 1008 bytes of the 4096 are handed out.
        let mut t = Tlsf::<8, 2>::new(4096);
        check(&t);
        assert_eq!(t.capacity(), 4096);
        assert_eq!(t.stats().largest_free_range, 1008);
        let a = t.allocate(1008, 16).unwrap();
        assert!(matches!(
            t.allocate(16, 16),
            Err(AllocError::OutOfMemory { .. })
        ));
        t.free(a).unwrap();
        // A request whose padded size classes past the last first level (1008 + 16 bytes of
        // alignment slack) still finds the block, by the fallback scan of its own class.
        let b = t.allocate(1008, 32).unwrap();
        assert_eq!(b.offset, 0);
        check(&t);
        t.free(b).unwrap();
        // No first level at all: every request refused cleanly.
        let mut none = Tlsf::<8, 0>::new(4096);
        assert!(none.allocate(16, 16).is_err());
        t.reset();
        check(&t);
    }

    /// Small deterministic generator for the randomised tests.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    #[test]
    fn exhaust_then_free_all() {
        const N: usize = 256;
        let cap = 64 * 1024;
        let mut t = Tlsf::<N>::new(cap);
        let mut rng = Lcg(7);
        let mut live = [Range::new(0, 0, 0); N];
        let mut n = 0;
        for round in 0..3 {
            loop {
                let size = 1 + rng.next() % 1500;
                let align = 1 << (rng.next() % 8);
                match t.allocate(size, align) {
                    Ok(r) => {
                        assert_eq!(r.offset % align, 0);
                        assert!(r.end() <= cap);
                        live[n] = r;
                        n += 1;
                    }
                    Err(AllocError::OutOfMemory { .. }) => break,
                    Err(e) => panic!("{e:?}"),
                }
                // Free some at random to fragment.
                if n > 0 && rng.next() % 3 == 0 {
                    let i = (rng.next() as usize) % n;
                    t.free(live[i]).unwrap();
                    live[i] = live[n - 1];
                    n -= 1;
                }
            }
            check(&t);
            for i in 0..n {
                for j in i + 1..n {
                    assert!(!live[i].overlaps(&live[j]));
                }
            }
            if round == 1 {
                t.reset();
                n = 0;
            } else {
                while n > 0 {
                    let i = (rng.next() as usize) % n;
                    t.free(live[i]).unwrap();
                    live[i] = live[n - 1];
                    n -= 1;
                }
            }
            check(&t);
            let s = t.stats();
            assert_eq!(s.largest_free_range, cap);
            assert_eq!((s.bytes_in_use, s.allocation_count), (0, 0));
        }
    }
}
