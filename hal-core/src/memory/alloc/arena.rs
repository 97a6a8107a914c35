//! PLACEHOLDER — being written; replaced wholesale.
use super::{AllocError, AllocStats, Range, RangeAllocator};

/// Bump allocator with marks. PLACEHOLDER.
pub struct Arena<const RECORDS: usize> {
    capacity: u64,
}

/// A point to roll an [`Arena`] back to. PLACEHOLDER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArenaMark {
    top: u64,
}

impl<const RECORDS: usize> Arena<RECORDS> {
    /// An empty arena over `capacity` bytes.
    pub const fn new(capacity: u64) -> Self {
        Self { capacity }
    }
    /// The current position.
    pub fn mark(&self) -> ArenaMark {
        ArenaMark { top: 0 }
    }
    /// Frees everything allocated after `mark`.
    pub fn reset_to(&mut self, _mark: ArenaMark) -> Result<(), AllocError> {
        todo!()
    }
}

impl<const RECORDS: usize> RangeAllocator for Arena<RECORDS> {
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
