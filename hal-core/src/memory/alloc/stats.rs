//! What an allocator reports about itself.

/// A snapshot of an allocator's state. All sizes are in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AllocStats {
    /// Size of the managed block.
    pub capacity: u64,
    /// Sum of the requested sizes of live ranges (not counting padding or rounding).
    pub bytes_in_use: u64,
    /// The largest `bytes_in_use` has been since the allocator was made (kept across reset).
    pub peak_bytes_in_use: u64,
    /// Number of live ranges.
    pub allocation_count: u64,
    /// The longest run of free bytes the allocator could hand out as one range (ignoring
    /// alignment and metadata limits). After everything is freed it equals `capacity`.
    pub largest_free_range: u64,
}
