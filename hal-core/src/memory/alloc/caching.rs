//! PLACEHOLDER — being written; replaced wholesale.
use super::{AllocError, AllocStats, Range, RangeAllocator};

/// Keeps freed blocks for reuse. PLACEHOLDER.
pub struct Caching<A: RangeAllocator, const ENTRIES: usize> {
    inner: A,
}

impl<A: RangeAllocator, const ENTRIES: usize> Caching<A, ENTRIES> {
    /// Wraps `inner`.
    pub fn new(inner: A) -> Self {
        Self { inner }
    }
    /// Gives every cached block back to the inner allocator; returns the bytes given back.
    pub fn trim(&mut self) -> u64 {
        todo!()
    }
    /// Bytes held in the cache.
    pub fn cached_bytes(&self) -> u64 {
        todo!()
    }
    /// The wrapped allocator.
    pub fn inner(&self) -> &A {
        &self.inner
    }
}

impl<A: RangeAllocator, const ENTRIES: usize> RangeAllocator for Caching<A, ENTRIES> {
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }
    fn allocate(&mut self, _size: u64, _alignment: u64) -> Result<Range, AllocError> {
        todo!()
    }
    fn free(&mut self, _range: Range) -> Result<(), AllocError> {
        todo!()
    }
    fn reset(&mut self) {
        todo!()
    }
    fn stats(&self) -> AllocStats {
        todo!()
    }
}
