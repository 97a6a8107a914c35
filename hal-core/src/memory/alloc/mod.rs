//! Allocators of *offsets* inside one block of device memory.
//!
//! A device-memory allocator never touches the memory it manages: the block may be a
//! `VkDeviceMemory`, a DSP's SRAM or a region the host cannot map. It hands out [`Range`]s
//! (offset, size) and keeps every bit of bookkeeping out of band, in storage sized by const
//! generics, so all of them work in firmware with no heap.
//!
//! | allocator | for | allocate / free |
//! |---|---|---|
//! | [`Arena`] | per-invocation transients: bump, marks, reset | O(1) / O(1) |
//! | [`Slab`] | many small same-sized buffers, by size class | O(1) / O(1) |
//! | [`Tlsf`] | general purpose, any power-of-two alignment, u64 offsets | O(1) / O(1) |
//! | [`Caching`] | wraps any of them, keeps freed blocks for reuse | O(1) / O(1) |
//!
//! # The contract
//!
//! Every [`RangeAllocator`] promises, and `hal-core`'s model-based tests check for each one:
//! live ranges never overlap, lie inside `0..capacity()`, and start at a multiple of the
//! alignment asked for; [`AllocStats`] is exact; bad input (zero size, an alignment that is not
//! a power of two, a size that overflows with its alignment, a request larger than the block,
//! freeing a range that is not live) is an [`AllocError`], never a panic, and leaves the
//! allocator as it was.
//!
//! # Your own allocator
//!
//! Implement the trait and everything that takes a `RangeAllocator` (the [`Caching`] wrapper,
//! drivers' heaps) accepts it. A first-fit allocator over a fixed table, in a few lines:
//!
//! ```
//! use hal_core::memory::alloc::{check_request, AllocError, AllocStats, Caching, Range, RangeAllocator};
//!
//! /// First fit over at most 8 live ranges, kept sorted by offset.
//! #[derive(Default)]
//! struct Live { items: [(u64, u64); 8], len: usize }
//! struct FirstFit { capacity: u64, live: Live, peak: u64 }
//!
//! impl RangeAllocator for FirstFit {
//!     fn capacity(&self) -> u64 { self.capacity }
//!
//!     fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
//!         check_request(size, alignment, self.capacity)?;
//!         let live = &mut self.live;
//!         if live.len == live.items.len() {
//!             return Err(AllocError::OutOfMetadata { capacity: live.items.len() as u32 });
//!         }
//!         let mut start = 0u64;
//!         for i in 0..=live.len {
//!             let aligned = start.next_multiple_of(alignment);
//!             let limit = if i < live.len { live.items[i].0 } else { self.capacity };
//!             if aligned.checked_add(size).is_some_and(|end| end <= limit) {
//!                 live.items.copy_within(i..live.len, i + 1);
//!                 live.items[i] = (aligned, size);
//!                 live.len += 1;
//!                 self.peak = self.peak.max(self.stats().bytes_in_use);
//!                 return Ok(Range::new(aligned, size, 0));
//!             }
//!             if i < live.len { start = live.items[i].0 + live.items[i].1; }
//!         }
//!         Err(AllocError::OutOfMemory { size, alignment, largest_free_range: self.stats().largest_free_range })
//!     }
//!
//!     fn free(&mut self, range: Range) -> Result<(), AllocError> {
//!         let live = &mut self.live;
//!         let i = live.items[..live.len].iter().position(|&(o, s)| (o, s) == (range.offset, range.size))
//!             .ok_or(AllocError::NotAllocated { offset: range.offset })?;
//!         live.items.copy_within(i + 1..live.len, i);
//!         live.len -= 1;
//!         Ok(())
//!     }
//!
//!     fn reset(&mut self) { self.live.len = 0; }
//!
//!     fn stats(&self) -> AllocStats {
//!         let live = &self.live.items[..self.live.len];
//!         let mut largest = 0;
//!         let mut start = 0;
//!         for &(o, s) in live { largest = largest.max(o - start); start = o + s; }
//!         AllocStats {
//!             capacity: self.capacity,
//!             bytes_in_use: live.iter().map(|r| r.1).sum(),
//!             peak_bytes_in_use: self.peak,
//!             allocation_count: live.len() as u64,
//!             largest_free_range: largest.max(self.capacity - start),
//!         }
//!     }
//! }
//!
//! // It plugs into the caching wrapper like any built-in allocator.
//! let mut cached = Caching::<_, 8>::new(FirstFit { capacity: 1024, live: Default::default(), peak: 0 });
//! let a = cached.allocate(100, 16)?;
//! cached.free(a)?;
//! let b = cached.allocate(100, 16)?; // served from the cache
//! assert_eq!(a.offset, b.offset);
//! assert!(cached.free(a).is_err()); // `a` is stale: its block now belongs to `b`
//! # Ok::<(), AllocError>(())
//! ```

mod arena;
mod caching;
mod error;
mod range;
mod slab;
mod stats;
mod tlsf;

pub use arena::{Arena, ArenaMark, ArenaOf, ArenaView, Record};
pub use caching::Caching;
pub use error::AllocError;
pub use range::Range;
pub use slab::{Slab, MAX_SIZE_CLASSES, SLOTS_PER_SPAN};
pub use stats::AllocStats;
pub use tlsf::{first_levels, Tlsf, ALL_FIRST_LEVELS, DEFAULT_FIRST_LEVELS};

/// An allocator of ranges inside one block of `capacity()` bytes that it never touches.
///
/// See the [module documentation](self) for the contract every implementation keeps.
pub trait RangeAllocator {
    /// Size in bytes of the block this allocator manages.
    fn capacity(&self) -> u64;

    /// Reserves `size` bytes whose offset is a multiple of `alignment` (a power of two).
    ///
    /// Returns a [`Range`] whose `size` is exactly `size`. Errors leave the allocator as it
    /// was.
    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError>;

    /// Gives back a range this allocator returned and that is still live.
    ///
    /// A range that is not live (freed twice, forged, from another allocator, or outlived by
    /// [`reset`](Self::reset)) is answered with an error and changes nothing.
    fn free(&mut self, range: Range) -> Result<(), AllocError>;

    /// Frees every live range at once. Ranges handed out before stay invalid afterwards.
    /// The peak in [`stats`](Self::stats) is kept.
    fn reset(&mut self);

    /// Current statistics. Not a hot path: it may take time linear in the metadata.
    fn stats(&self) -> AllocStats;
}

/// The checks every allocator makes before it looks at its free space: `size` is not zero,
/// `alignment` is a power of two, `size` rounded up to `alignment` does not overflow, and
/// `size` is at most `capacity`.
///
/// Custom allocators should call it first so that they answer bad input the same way the
/// built-in ones do.
#[inline(always)]
pub const fn check_request(size: u64, alignment: u64, capacity: u64) -> Result<(), AllocError> {
    // All four at once, with one branch: `1 <= size <= capacity`; a power of two; and
    // `size + alignment - 1 <= u64::MAX`, i.e. `size <= !(alignment - 1)`.
    let fits = size.wrapping_sub(1) < capacity;
    let power_of_two = alignment != 0 && alignment & (alignment - 1) == 0;
    let rounds = size <= !alignment.wrapping_sub(1);
    if fits & power_of_two & rounds {
        return Ok(());
    }
    refusal(size, alignment, capacity)
}

/// Which check of [`check_request`] a refused request fails, in the order it documents.
#[cold]
const fn refusal(size: u64, alignment: u64, capacity: u64) -> Result<(), AllocError> {
    if size == 0 {
        return Err(AllocError::ZeroSize);
    }
    if !alignment.is_power_of_two() {
        return Err(AllocError::InvalidAlignment { alignment });
    }
    if size.checked_add(alignment - 1).is_none() {
        return Err(AllocError::SizeOverflow { size, alignment });
    }
    if size > capacity {
        return Err(AllocError::TooLarge { size, capacity });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_classified() {
        assert_eq!(check_request(0, 8, 64), Err(AllocError::ZeroSize));
        assert_eq!(
            check_request(8, 0, 64),
            Err(AllocError::InvalidAlignment { alignment: 0 })
        );
        assert_eq!(
            check_request(8, 24, 64),
            Err(AllocError::InvalidAlignment { alignment: 24 })
        );
        assert_eq!(
            check_request(u64::MAX - 2, 8, u64::MAX),
            Err(AllocError::SizeOverflow {
                size: u64::MAX - 2,
                alignment: 8
            })
        );
        assert_eq!(
            check_request(65, 8, 64),
            Err(AllocError::TooLarge {
                size: 65,
                capacity: 64
            })
        );
        assert_eq!(check_request(64, 1 << 63, 64), Ok(()));
    }

    #[test]
    fn the_one_branch_check_agrees_with_the_checks_in_order() {
        let m = u64::MAX;
        let sizes = [0, 1, 2, 7, 8, 63, 64, 65, m - 8, m - 7, m - 6, m - 1, m];
        let alignments = [0, 1, 2, 3, 8, 24, 64, 1 << 62, 1 << 63, m];
        for size in sizes {
            for alignment in alignments {
                for capacity in [0, 1, 64, m - 7, m] {
                    assert_eq!(
                        check_request(size, alignment, capacity),
                        refusal(size, alignment, capacity),
                        "size {size} alignment {alignment} capacity {capacity}"
                    );
                }
            }
        }
    }
}
