//! PLACEHOLDER — being written; replaced wholesale.
use super::{AllocError, AllocStats, Range, RangeAllocator};

/// Most size classes a [`Slab`] can have.
pub const MAX_SIZE_CLASSES: usize = 16;
/// Slots in one span of a size class.
pub const SLOTS_PER_SPAN: u64 = 64;

/// Size-class slab allocator over a backing allocator. PLACEHOLDER.
pub struct Slab<A: RangeAllocator, const SPANS: usize> {
    backing: A,
}

impl<A: RangeAllocator, const SPANS: usize> Slab<A, SPANS> {
    /// A slab with the given size classes (ascending) over `backing`.
    pub fn new(backing: A, _class_sizes: &[u64]) -> Result<Self, AllocError> {
        Ok(Self { backing })
    }
    /// The backing allocator.
    pub fn backing(&self) -> &A {
        &self.backing
    }
}

impl<A: RangeAllocator, const SPANS: usize> RangeAllocator for Slab<A, SPANS> {
    fn capacity(&self) -> u64 {
        self.backing.capacity()
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
