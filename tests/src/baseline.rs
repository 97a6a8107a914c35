//! The baseline pass: the harness driving an allocator that does nothing, so that every
//! timed row can be read net of what the harness itself costs.

use crate::adapter::BenchAllocator;

/// Name of the baseline row.
pub const NAME: &str = "baseline (no allocator)";

/// Hands out offset 0 for every request and forgets every free: what is left of a timed
/// replay on it is the harness (op decoding, the handle table, `black_box`, the clock).
/// Its handle is 8 bytes, the size of the peers' pointers.
pub struct Baseline {
    capacity: u64,
}

impl Baseline {
    /// A baseline over a block of `capacity` bytes (never used).
    pub fn new(capacity: u64) -> Self {
        Self { capacity }
    }
}

impl BenchAllocator for Baseline {
    type Handle = u64;

    fn name(&self) -> &'static str {
        NAME
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline(always)]
    fn alloc(&mut self, _size: u64, _align: u64) -> Option<u64> {
        Some(0)
    }

    #[inline(always)]
    fn free(&mut self, _handle: u64) {}

    fn offset(&self, handle: &u64) -> u64 {
        *handle
    }
}
