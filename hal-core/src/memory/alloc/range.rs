//! What an allocator hands out.

/// A live allocation: `size` bytes at `offset` inside the allocator's block.
///
/// `token` is the allocator's own key for the allocation (a metadata index and a generation,
/// for the built-in allocators), so that `free` is O(1) and a stale or forged range is
/// recognised. Callers should treat it as opaque and give back the `Range` they got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Range {
    /// Byte offset from the start of the block.
    pub offset: u64,
    /// Size in bytes, exactly as requested.
    pub size: u64,
    token: u64,
}

impl Range {
    /// A range, for allocators to construct. `token` is the allocator's to define.
    #[inline]
    pub const fn new(offset: u64, size: u64, token: u64) -> Self {
        Self {
            offset,
            size,
            token,
        }
    }

    /// The allocator's key for this allocation.
    #[inline]
    pub const fn token(&self) -> u64 {
        self.token
    }

    /// One past the last byte (`offset + size`, saturating).
    #[inline]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }

    /// Whether two ranges share at least one byte.
    #[inline]
    pub const fn overlaps(&self, other: &Range) -> bool {
        self.offset < other.end() && other.offset < self.end()
    }
}
