//! Why an allocator refused.

/// Why an allocation or a free was refused. The allocator is unchanged after any of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AllocError {
    /// A request for zero bytes.
    #[error("zero-sized allocation")]
    ZeroSize,
    /// An alignment that is zero or not a power of two.
    #[error("alignment {alignment} is not a power of two")]
    InvalidAlignment {
        /// The alignment asked for.
        alignment: u64,
    },
    /// `size` rounded up to `alignment` does not fit in a u64.
    #[error("size {size} with alignment {alignment} overflows u64")]
    SizeOverflow {
        /// The size asked for.
        size: u64,
        /// The alignment asked for.
        alignment: u64,
    },
    /// A request larger than the whole block.
    #[error("request of {size} bytes exceeds the block of {capacity} bytes")]
    TooLarge {
        /// The size asked for.
        size: u64,
        /// The block's size.
        capacity: u64,
    },
    /// No free range is large enough (the block is full or fragmented).
    #[error(
        "out of memory: {size} bytes aligned to {alignment} do not fit; largest free range is {largest_free_range} bytes"
    )]
    OutOfMemory {
        /// The size asked for.
        size: u64,
        /// The alignment asked for.
        alignment: u64,
        /// The longest free run at the time.
        largest_free_range: u64,
    },
    /// The fixed-capacity metadata table is full: make the allocator's const capacity larger.
    #[error("metadata table full ({capacity} entries)")]
    OutOfMetadata {
        /// Entries in the table.
        capacity: u32,
    },
    /// An alignment larger than this allocator can honour.
    #[error("alignment {alignment} exceeds the largest supported ({max})")]
    UnsupportedAlignment {
        /// The alignment asked for.
        alignment: u64,
        /// The largest this allocator supports.
        max: u64,
    },
    /// Freeing a range that is not live: freed already, outlived by a reset, or never
    /// handed out by this allocator.
    #[error("range at offset {offset} is not allocated (double free, stale or foreign range)")]
    NotAllocated {
        /// The offset of the range given.
        offset: u64,
    },
    /// Freeing a range whose offset or size differs from what was handed out.
    #[error("range at offset {offset} of {size} bytes does not match the allocation at offset {expected_offset} of {expected_size} bytes")]
    Mismatch {
        /// The offset given.
        offset: u64,
        /// The size given.
        size: u64,
        /// The offset handed out.
        expected_offset: u64,
        /// The size handed out.
        expected_size: u64,
    },
    /// A construction parameter is unusable (the message says which).
    #[error("invalid configuration: {0}")]
    InvalidConfig(&'static str),
}
