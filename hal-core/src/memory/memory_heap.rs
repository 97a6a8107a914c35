//! A heap: one kind of memory a device offers, with its limits.

use super::{BufferParams, BufferUsage, MemoryType};

/// One kind of memory a device offers (IREE's `iree_hal_allocator_memory_heap_t`).
///
/// Invariant (checked by [`MemoryHeap::new`]): `min_alignment` is a power of two and
/// `max_allocation_size <= size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MemoryHeap {
    /// The properties of this memory.
    pub types: MemoryType,
    /// The usages buffers in this heap may have.
    pub allowed_usage: BufferUsage,
    /// The largest single allocation (a larger buffer must be chunked).
    pub max_allocation_size: u64,
    /// Every allocation's offset is a multiple of this.
    pub min_alignment: u64,
    /// Total bytes in the heap.
    pub size: u64,
}

/// Why buffer parameters do not fit a heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ParamsError {
    /// The heap's memory lacks properties the caller asked for.
    #[error("memory type {wanted:#x} not offered by a heap of type {offered:#x}")]
    MemoryType {
        /// Bits of [`MemoryType`] asked for.
        wanted: u32,
        /// Bits of [`MemoryType`] the heap has.
        offered: u32,
    },
    /// The heap does not allow some of the usages asked for.
    #[error("usage {wanted:#x} not allowed by a heap allowing {allowed:#x}")]
    Usage {
        /// Bits of [`BufferUsage`] asked for.
        wanted: u32,
        /// Bits of [`BufferUsage`] the heap allows.
        allowed: u32,
    },
    /// Mapping was required but the memory is not host-visible.
    #[error("mapping requested for memory the host cannot see")]
    NotMappable,
    /// An alignment that is zero (where not allowed) or not a power of two.
    #[error("alignment {0} is not a power of two")]
    Alignment(u64),
    /// A heap whose largest allocation exceeds its size.
    #[error("max allocation size {max_allocation_size} exceeds heap size {size}")]
    HeapLimits {
        /// The heap's largest allocation.
        max_allocation_size: u64,
        /// The heap's size.
        size: u64,
    },
}

impl MemoryHeap {
    /// A heap description, checked: `min_alignment` must be a power of two and
    /// `max_allocation_size` at most `size`.
    pub const fn new(
        types: MemoryType,
        allowed_usage: BufferUsage,
        max_allocation_size: u64,
        min_alignment: u64,
        size: u64,
    ) -> Result<Self, ParamsError> {
        if !min_alignment.is_power_of_two() {
            return Err(ParamsError::Alignment(min_alignment));
        }
        if max_allocation_size > size {
            return Err(ParamsError::HeapLimits {
                max_allocation_size,
                size,
            });
        }
        Ok(Self {
            types,
            allowed_usage,
            max_allocation_size,
            min_alignment,
            size,
        })
    }

    /// Checks that a buffer with `params` may live in this heap, and returns the alignment
    /// its offset needs (the larger of the heap's and the caller's).
    pub fn check(&self, params: &BufferParams) -> Result<u64, ParamsError> {
        if !self.types.satisfies(params.memory_type) {
            return Err(ParamsError::MemoryType {
                wanted: params.memory_type.bits(),
                offered: self.types.bits(),
            });
        }
        if params.usage.requires_mapping() && !self.types.is_mappable() {
            return Err(ParamsError::NotMappable);
        }
        let wanted = params.usage.difference(BufferUsage::MAPPING_OPTIONAL);
        let wanted = if self.types.is_mappable() {
            wanted
        } else {
            wanted.difference(BufferUsage::MAPPING)
        };
        if !self.allowed_usage.contains(wanted) {
            return Err(ParamsError::Usage {
                wanted: wanted.bits(),
                allowed: self.allowed_usage.bits(),
            });
        }
        match params.min_alignment {
            0 => Ok(self.min_alignment),
            a if a.is_power_of_two() => Ok(a.max(self.min_alignment)),
            a => Err(ParamsError::Alignment(a)),
        }
    }

    /// How many allocations of at most `max_allocation_size` a buffer of `size` bytes needs
    /// (at least one). A buffer that needs more than one must be chunked.
    pub const fn chunks_for(&self, size: u64) -> u64 {
        if size == 0 || self.max_allocation_size == 0 {
            return 1;
        }
        size.div_ceil(self.max_allocation_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryAccess;

    fn unified() -> MemoryHeap {
        let types = MemoryType::DEVICE_LOCAL | MemoryType::HOST_VISIBLE | MemoryType::HOST_COHERENT;
        let usage = BufferUsage::all();
        MemoryHeap::new(types, usage, 1 << 20, 64, 1 << 24).unwrap()
    }

    #[test]
    fn heap_limits_are_checked() {
        let t = MemoryType::DEVICE_LOCAL;
        let u = BufferUsage::DEFAULT;
        assert_eq!(
            MemoryHeap::new(t, u, 16, 3, 16),
            Err(ParamsError::Alignment(3))
        );
        assert!(matches!(
            MemoryHeap::new(t, u, 32, 4, 16),
            Err(ParamsError::HeapLimits { .. })
        ));
    }

    #[test]
    fn params_fit_a_unified_heap() {
        let heap = unified();
        assert_eq!(heap.check(&BufferParams::device_local()), Ok(64));
        let p = BufferParams::host_visible().with_min_alignment(4096);
        assert_eq!(heap.check(&p), Ok(4096));
        let p = BufferParams::host_visible().with_min_alignment(48);
        assert_eq!(heap.check(&p), Err(ParamsError::Alignment(48)));
    }

    #[test]
    fn mapping_device_only_memory_is_refused() {
        let heap =
            MemoryHeap::new(MemoryType::DEVICE_LOCAL, BufferUsage::all(), 64, 4, 64).unwrap();
        assert_eq!(
            heap.check(&BufferParams::host_visible()),
            Err(ParamsError::MemoryType {
                wanted: MemoryType::HOST_VISIBLE.bits(),
                offered: MemoryType::DEVICE_LOCAL.bits(),
            })
        );
        let p = BufferParams {
            memory_type: MemoryType::DEVICE_LOCAL,
            usage: BufferUsage::MAPPING_SCOPED,
            access: MemoryAccess::READ,
            queue_affinity: 0,
            min_alignment: 0,
        };
        assert_eq!(heap.check(&p), Err(ParamsError::NotMappable));
        let optional = p.with_usage(BufferUsage::MAPPING_SCOPED | BufferUsage::MAPPING_OPTIONAL);
        assert_eq!(heap.check(&optional), Ok(4));
    }

    /// Device-local mappable memory: a unified heap, or a discrete GPU's BAR heap; neither
    /// device-only nor host-only memory.
    #[test]
    fn device_local_mappable_needs_both() {
        let p = BufferParams::device_local_mappable();
        assert_eq!(unified().check(&p), Ok(64));
        let usage = BufferUsage::all();
        let host = MemoryType::HOST_VISIBLE | MemoryType::HOST_COHERENT;
        for types in [MemoryType::DEVICE_LOCAL, host] {
            let heap = MemoryHeap::new(types, usage, 64, 4, 64).unwrap();
            assert_eq!(
                heap.check(&p),
                Err(ParamsError::MemoryType {
                    wanted: p.memory_type.bits(),
                    offered: types.bits(),
                })
            );
        }
        let bar = MemoryHeap::new(MemoryType::DEVICE_LOCAL | host, usage, 64, 4, 64).unwrap();
        assert_eq!(bar.check(&p), Ok(4));
        assert!(p.usage.requires_mapping());
    }

    #[test]
    fn usage_outside_the_heap_is_refused() {
        let heap =
            MemoryHeap::new(MemoryType::DEVICE_LOCAL, BufferUsage::TRANSFER, 64, 4, 64).unwrap();
        assert!(matches!(
            heap.check(&BufferParams::device_local()),
            Err(ParamsError::Usage { .. })
        ));
    }

    #[test]
    fn chunk_count_rounds_up() {
        let heap = unified();
        assert_eq!(heap.chunks_for(1), 1);
        assert_eq!(heap.chunks_for(1 << 20), 1);
        assert_eq!(heap.chunks_for((1 << 20) + 1), 2);
        assert_eq!(heap.chunks_for(u64::MAX), u64::MAX.div_ceil(1 << 20));
    }
}
