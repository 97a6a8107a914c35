//! PLACEHOLDER — being written; replaced wholesale.
use super::{AllocError, AllocStats, Range, RangeAllocator};

/// Two-level segregated fit. PLACEHOLDER.
pub struct Tlsf<const NODES: usize> {
    capacity: u64,
}

impl<const NODES: usize> Tlsf<NODES> {
    /// An empty allocator over `capacity` bytes.
    pub const fn new(capacity: u64) -> Self {
        Self { capacity }
    }
}

impl<const NODES: usize> RangeAllocator for Tlsf<NODES> {
    fn capacity(&self) -> u64 {
        self.capacity
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
