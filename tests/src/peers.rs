//! Adapters for the peer allocators the benchmark compares with.
//!
//! - [`OffsetAlloc`]: `offset-allocator` (Sebastian Aaltonen's design) manages offsets like
//!   Ember does, but has `u32` sizes and no alignment parameter. Alignment is served by
//!   over-allocating `size + align - 1` and aligning the offset up inside the allocation
//!   (only when `align > 1`), which costs it up to `align - 1` bytes per allocation in
//!   the efficiency figure.
//! - [`RlsfTlsf`], [`TalcHeap`], [`LinkedListHeap`]: `rlsf::Tlsf`, `talc::base::Talc` and
//!   `linked_list_allocator::Heap` keep their metadata inside the memory they manage, so each
//!   is given a real region ([`Region`]) of the same size as the Ember block. The region is
//!   written once before use so that page faults stay out of the timings. Their offsets are
//!   `pointer - region start`; their in-band headers count against them in the efficiency
//!   figure, as they would in real use.

use core::alloc::Layout;
use core::ptr::NonNull;

use talc::base::Talc;
use talc::source::Manual;
use talc::DefaultBinning;

use crate::adapter::BenchAllocator;

/// Alignment of a [`Region`]'s start: the largest alignment any trace asks for.
pub const REGION_ALIGN: usize = 4096;

/// A heap-allocated, page-aligned, pre-faulted region of memory, freed on drop.
pub struct Region {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl Region {
    /// A region of `size` bytes (`size > 0`), aligned to [`REGION_ALIGN`], every byte
    /// written.
    pub fn new(size: usize) -> Self {
        let layout = Layout::from_size_align(size, REGION_ALIGN).expect("region layout");
        assert!(size > 0);
        // SAFETY: `layout` has a non-zero size (checked above).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: `ptr` is valid for writes of `size` bytes: it was just allocated with
        // that size. Writing every byte faults the pages in now rather than in a timed loop.
        unsafe { core::ptr::write_bytes(ptr.as_ptr(), 0xA5, size) };
        Self { ptr, layout }
    }

    /// First byte.
    pub fn start(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Always `false` (regions are never empty); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The region as a raw slice pointer.
    pub fn as_slice_ptr(&self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.ptr, self.len())
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated by `std::alloc::alloc` with `layout` and is freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

// --- offset-allocator -------------------------------------------------------------------

/// `offset_allocator::Allocator` with alignment served by over-allocation (see the module
/// documentation).
pub struct OffsetAlloc {
    inner: offset_allocator::Allocator<u32>,
    capacity: u64,
}

impl OffsetAlloc {
    /// Manages `capacity` bytes (at most `u32::MAX`), with room for 2^17 live allocations.
    pub fn new(capacity: u64) -> Self {
        Self::with_max_allocs(capacity, 1 << 17)
    }

    /// Manages `capacity` bytes (at most `u32::MAX`), with room for `max_allocs` live
    /// allocations (the allocator initialises a node for each).
    pub fn with_max_allocs(capacity: u64, max_allocs: u32) -> Self {
        let size = u32::try_from(capacity).expect("offset-allocator sizes are u32");
        Self {
            inner: offset_allocator::Allocator::with_max_allocs(size, max_allocs),
            capacity,
        }
    }
}

impl BenchAllocator for OffsetAlloc {
    /// The allocation, and the aligned offset handed out inside it.
    type Handle = (offset_allocator::Allocation<u32>, u32);

    fn name(&self) -> &'static str {
        "offset-allocator"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline(always)]
    fn alloc(&mut self, size: u64, align: u64) -> Option<Self::Handle> {
        let padded = u32::try_from(size + align - 1).ok()?;
        let a = self.inner.allocate(padded)?;
        let aligned = a.offset.next_multiple_of(align as u32);
        Some((a, aligned))
    }

    #[inline(always)]
    fn free(&mut self, handle: Self::Handle) {
        self.inner.free(handle.0);
    }

    fn offset(&self, handle: &Self::Handle) -> u64 {
        u64::from(handle.1)
    }
}

// --- rlsf -----------------------------------------------------------------------------------

/// The `rlsf` configuration: 24 first-level classes (blocks up to 512 MiB with the 32-byte
/// granularity of 64-bit targets), 32 second-level classes (as Ember's `Tlsf`).
pub type RlsfInner = rlsf::Tlsf<'static, u32, u32, 24, 32>;

/// `rlsf::Tlsf` over a [`Region`].
pub struct RlsfTlsf {
    // Field order: `tlsf` must not outlive `region` (it never touches it on drop anyway).
    tlsf: RlsfInner,
    region: Region,
}

impl RlsfTlsf {
    /// An allocator over a fresh region of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        let region = Region::new(capacity as usize);
        let mut tlsf = RlsfInner::new();
        // SAFETY: the region is owned by `self` and so outlives `tlsf`; nothing else touches
        // it while `tlsf` owns it.
        let added = unsafe { tlsf.insert_free_block_ptr(region.as_slice_ptr()) };
        assert!(added.is_some(), "rlsf rejected the region");
        Self { tlsf, region }
    }
}

impl BenchAllocator for RlsfTlsf {
    /// The pointer and the alignment (rlsf's `deallocate` needs it).
    type Handle = (NonNull<u8>, usize);

    fn name(&self) -> &'static str {
        "rlsf"
    }

    fn capacity(&self) -> u64 {
        self.region.len() as u64
    }

    #[inline(always)]
    fn alloc(&mut self, size: u64, align: u64) -> Option<Self::Handle> {
        let layout = Layout::from_size_align(size as usize, align as usize).ok()?;
        self.tlsf.allocate(layout).map(|p| (p, align as usize))
    }

    #[inline(always)]
    fn free(&mut self, (ptr, align): Self::Handle) {
        // SAFETY: the harness frees each handle once, and handles come from `alloc`, which
        // allocated them from `self.tlsf` with this alignment.
        unsafe { self.tlsf.deallocate(ptr, align) }
    }

    fn offset(&self, handle: &Self::Handle) -> u64 {
        (handle.0.as_ptr() as usize - self.region.start() as usize) as u64
    }
}

// --- talc -----------------------------------------------------------------------------------

/// `talc::base::Talc` (talc 5) with the `Manual` source and default binning, over a
/// [`Region`] given to it with `claim`.
pub struct TalcHeap {
    talc: Talc<Manual, DefaultBinning>,
    region: Region,
}

impl TalcHeap {
    /// An allocator over a fresh region of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        let region = Region::new(capacity as usize);
        let mut talc = Talc::new(Manual);
        // SAFETY: the region is owned by `self`, outlives `talc`, and is not touched by
        // anything else; `Manual` allows manual heap management.
        let claimed = unsafe { talc.claim(region.start(), region.len()) };
        assert!(claimed.is_some(), "talc rejected the region");
        Self { talc, region }
    }
}

impl BenchAllocator for TalcHeap {
    /// The pointer and its layout (talc's `deallocate` needs it).
    type Handle = (NonNull<u8>, Layout);

    fn name(&self) -> &'static str {
        "talc"
    }

    fn capacity(&self) -> u64 {
        self.region.len() as u64
    }

    #[inline(always)]
    fn alloc(&mut self, size: u64, align: u64) -> Option<Self::Handle> {
        let layout = Layout::from_size_align(size as usize, align as usize).ok()?;
        // SAFETY: every trace size is non-zero.
        unsafe { self.talc.try_allocate(layout) }.map(|p| (p, layout))
    }

    #[inline(always)]
    fn free(&mut self, (ptr, layout): Self::Handle) {
        // SAFETY: the harness frees each handle once; it was allocated by `self.talc` with
        // this layout.
        unsafe { self.talc.deallocate(ptr.as_ptr(), layout) }
    }

    fn offset(&self, handle: &Self::Handle) -> u64 {
        (handle.0.as_ptr() as usize - self.region.start() as usize) as u64
    }
}

// --- linked_list_allocator ------------------------------------------------------------------

/// `linked_list_allocator::Heap` (first fit) over a [`Region`].
pub struct LinkedListHeap {
    heap: linked_list_allocator::Heap,
    region: Region,
}

impl LinkedListHeap {
    /// An allocator over a fresh region of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        let region = Region::new(capacity as usize);
        // SAFETY: the region is valid, unused by anything else, and outlives the heap (both
        // are owned by `self`, and the heap never touches it on drop).
        let heap = unsafe { linked_list_allocator::Heap::new(region.start(), region.len()) };
        Self { heap, region }
    }
}

impl BenchAllocator for LinkedListHeap {
    /// The pointer and its layout (the heap's `deallocate` needs it).
    type Handle = (NonNull<u8>, Layout);

    fn name(&self) -> &'static str {
        "linked_list_allocator"
    }

    fn capacity(&self) -> u64 {
        self.region.len() as u64
    }

    #[inline(always)]
    fn alloc(&mut self, size: u64, align: u64) -> Option<Self::Handle> {
        let layout = Layout::from_size_align(size as usize, align as usize).ok()?;
        self.heap
            .allocate_first_fit(layout)
            .ok()
            .map(|p| (p, layout))
    }

    #[inline(always)]
    fn free(&mut self, (ptr, layout): Self::Handle) {
        // SAFETY: the harness frees each handle once; it was allocated by `self.heap` with
        // this layout.
        unsafe { self.heap.deallocate(ptr, layout) }
    }

    fn offset(&self, handle: &Self::Handle) -> u64 {
        (handle.0.as_ptr() as usize - self.region.start() as usize) as u64
    }
}
