//! The range-allocator checks on the host: every check in `allocator_checks()` passes, and
//! the contract checks catch an allocator that breaks its promises.

use ember_conformance::{allocator_checks, check_range_allocator};
use hal_core::memory::alloc::{check_request, AllocError, AllocStats, Range, RangeAllocator};

#[test]
fn every_allocator_check_passes() {
    let names: Vec<_> = allocator_checks().iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "tlsf",
            "arena",
            "slab_over_tlsf",
            "caching_over_tlsf",
            "caching_over_arena"
        ]
    );
    for check in allocator_checks() {
        (check.run)();
    }
}

/// A fault to plant in [`FirstFit`].
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Every fourth allocation ignores the alignment asked for (off by 8 when it is larger).
    Misaligned,
    /// From the 40th allocation on, one unaligned request placed right after a live range
    /// overlaps it by a byte.
    Overlap,
    /// `bytes_in_use` forgets one byte once 3 ranges are live.
    Miscount,
    /// Freeing a range that is not live succeeds (silently).
    AcceptsDoubleFree,
    /// A refused request bumps the peak.
    RefusalChangesState,
}

/// First fit over at most 64 live ranges, kept sorted by offset (the module documentation's
/// example allocator), with one fault planted.
struct FirstFit {
    capacity: u64,
    live: Vec<(u64, u64, u64)>,
    peak: u64,
    allocations: u64,
    fault: Fault,
}

impl FirstFit {
    fn new(capacity: u64, fault: Fault) -> Self {
        Self {
            capacity,
            live: Vec::new(),
            peak: 0,
            allocations: 0,
            fault,
        }
    }
}

impl RangeAllocator for FirstFit {
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        check_request(size, alignment, self.capacity)?;
        if self.live.len() == 64 {
            return Err(AllocError::OutOfMetadata { capacity: 64 });
        }
        self.allocations += 1;
        let mut start = 0u64;
        for i in 0..=self.live.len() {
            let mut aligned = start.next_multiple_of(alignment);
            if self.fault == Fault::Misaligned && self.allocations % 4 == 0 && alignment > 8 {
                aligned += 8;
            }
            let limit = self.live.get(i).map_or(self.capacity, |l| l.0);
            if aligned.checked_add(size).is_some_and(|end| end <= limit) {
                if self.fault == Fault::Overlap
                    && self.allocations >= 40
                    && alignment == 1
                    && i > 0
                    && aligned == start
                {
                    aligned -= 1;
                    self.fault = Fault::None;
                }
                let token = self.allocations;
                self.live.insert(i, (aligned, size, token));
                self.peak = self.peak.max(self.live.iter().map(|l| l.1).sum());
                return Ok(Range::new(aligned, size, token));
            }
            if let Some(l) = self.live.get(i) {
                start = l.0 + l.1;
            }
        }
        if self.fault == Fault::RefusalChangesState {
            self.peak += 1;
        }
        Err(AllocError::OutOfMemory {
            size,
            alignment,
            largest_free_range: self.stats().largest_free_range,
        })
    }

    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let found = self
            .live
            .iter()
            .position(|&l| l == (range.offset, range.size, range.token()));
        match found {
            Some(i) => {
                self.live.remove(i);
                Ok(())
            }
            None if self.fault == Fault::AcceptsDoubleFree => Ok(()),
            None => Err(AllocError::NotAllocated {
                offset: range.offset,
            }),
        }
    }

    fn reset(&mut self) {
        self.live.clear();
    }

    fn stats(&self) -> AllocStats {
        let mut largest = 0;
        let mut start = 0;
        for &(o, s, _) in &self.live {
            largest = largest.max(o.saturating_sub(start));
            start = o + s;
        }
        let in_use: u64 = self.live.iter().map(|l| l.1).sum();
        let miscount = self.fault == Fault::Miscount && self.live.len() >= 3;
        AllocStats {
            capacity: self.capacity,
            bytes_in_use: in_use - u64::from(miscount),
            peak_bytes_in_use: self.peak,
            allocation_count: self.live.len() as u64,
            largest_free_range: largest.max(self.capacity - start),
        }
    }
}

#[test]
fn a_correct_custom_allocator_passes() {
    check_range_allocator("first fit", &mut FirstFit::new(1 << 20, Fault::None), 1);
}

#[test]
#[should_panic(expected = "asked for alignment")]
fn misalignment_is_caught() {
    check_range_allocator(
        "first fit",
        &mut FirstFit::new(1 << 20, Fault::Misaligned),
        1,
    );
}

#[test]
#[should_panic(expected = "live ranges overlap")]
fn overlap_is_caught() {
    check_range_allocator("first fit", &mut FirstFit::new(1 << 20, Fault::Overlap), 1);
}

#[test]
#[should_panic(expected = "bytes_in_use is")]
fn miscounted_stats_are_caught() {
    check_range_allocator("first fit", &mut FirstFit::new(1 << 20, Fault::Miscount), 1);
}

#[test]
#[should_panic(expected = "which is not live, gave Ok(())")]
fn an_accepted_double_free_is_caught() {
    check_range_allocator(
        "first fit",
        &mut FirstFit::new(1 << 20, Fault::AcceptsDoubleFree),
        1,
    );
}

#[test]
#[should_panic(expected = "a refused request")]
fn a_refusal_that_changes_state_is_caught() {
    check_range_allocator(
        "first fit",
        &mut FirstFit::new(1 << 20, Fault::RefusalChangesState),
        1,
    );
}
