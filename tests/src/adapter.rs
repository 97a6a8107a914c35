//! The interface the harness drives, and its implementation for Ember's allocators.

use hal_core::memory::alloc::{AllocError, Range, RangeAllocator};

/// What the harness needs from an allocator: allocate, free, and the offset of a live
/// allocation (for the overlap check and the JSON-free sanity checks).
///
/// Every adapter manages one block of [`capacity`](Self::capacity) bytes; offsets are
/// relative to the start of that block.
pub trait BenchAllocator {
    /// What `alloc` hands out and `free` takes back.
    type Handle: Copy;

    /// The name in the table and the JSON report.
    fn name(&self) -> &'static str;

    /// Size of the managed block in bytes.
    fn capacity(&self) -> u64;

    /// Allocates `size` bytes aligned to `align` (a power of two); `None` on failure.
    fn alloc(&mut self, size: u64, align: u64) -> Option<Self::Handle>;

    /// Frees a live handle.
    fn free(&mut self, handle: Self::Handle);

    /// Offset of the allocation from the start of the block.
    fn offset(&self, handle: &Self::Handle) -> u64;

    /// Why the last failed `alloc` failed, where the allocator says.
    fn last_error(&self) -> Option<String> {
        None
    }
}

/// Adapter for any Ember [`RangeAllocator`]: the allocator is boxed (its metadata lives in
/// const-generic arrays), `Range` is the handle.
pub struct Ember<A: RangeAllocator> {
    name: &'static str,
    inner: Box<A>,
    last_error: Option<AllocError>,
}

impl<A: RangeAllocator> Ember<A> {
    /// Wraps `inner` under `name`.
    pub fn new(name: &'static str, inner: Box<A>) -> Self {
        Self {
            name,
            inner,
            last_error: None,
        }
    }

    /// The wrapped allocator.
    pub fn inner(&self) -> &A {
        &self.inner
    }
}

impl<A: RangeAllocator> BenchAllocator for Ember<A> {
    type Handle = Range;

    fn name(&self) -> &'static str {
        self.name
    }

    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    #[inline(always)]
    fn alloc(&mut self, size: u64, align: u64) -> Option<Range> {
        match self.inner.allocate(size, align) {
            Ok(r) => Some(r),
            Err(e) => {
                self.last_error = Some(e);
                None
            }
        }
    }

    #[inline(always)]
    fn free(&mut self, handle: Range) {
        let freed = self.inner.free(handle);
        debug_assert!(freed.is_ok(), "{}: free failed: {freed:?}", self.name);
    }

    fn offset(&self, handle: &Range) -> u64 {
        handle.offset
    }

    fn last_error(&self) -> Option<String> {
        self.last_error.map(|e| e.to_string())
    }
}
