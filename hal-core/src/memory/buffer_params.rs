//! What a caller asks for when it allocates a buffer.

use super::{BufferUsage, MemoryAccess, MemoryType};

/// Parameters of a buffer allocation (IREE's `iree_hal_buffer_params_t`).
///
/// `min_alignment` of 0 means "the heap's own alignment"; any other value must be a power of
/// two. `queue_affinity` is a bit set of queues that may use the buffer (0 = any).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferParams {
    /// The kind of memory wanted.
    pub memory_type: MemoryType,
    /// Every way the buffer will be used.
    pub usage: BufferUsage,
    /// The access the buffer allows.
    pub access: MemoryAccess,
    /// Queues that may use the buffer; 0 means any.
    pub queue_affinity: u64,
    /// Minimum alignment of the buffer's offset; 0 means the heap's.
    pub min_alignment: u64,
}

impl BufferParams {
    /// Device-local memory for dispatches and transfers, readable and writable.
    pub const fn device_local() -> Self {
        Self {
            memory_type: MemoryType::DEVICE_LOCAL,
            usage: BufferUsage::DEFAULT,
            access: MemoryAccess::ALL,
            queue_affinity: 0,
            min_alignment: 0,
        }
    }

    /// Memory the host can map (for staging and results read back by the host).
    pub const fn host_visible() -> Self {
        Self {
            memory_type: MemoryType::HOST_VISIBLE,
            usage: BufferUsage::DEFAULT.union(BufferUsage::MAPPING_SCOPED),
            access: MemoryAccess::ALL,
            queue_affinity: 0,
            min_alignment: 0,
        }
    }

    /// Device-local memory the host can also map: for what the host writes and a device
    /// reads next (a model's inputs), with no staging copy and no device loads across a
    /// bus. Unified memory is always both; a discrete GPU offers it through its BAR where it
    /// has one, and where it has none the allocation is refused ([`host_visible`] is then
    /// the way).
    ///
    /// [`host_visible`]: Self::host_visible
    pub const fn device_local_mappable() -> Self {
        Self {
            memory_type: MemoryType::DEVICE_LOCAL.union(MemoryType::HOST_VISIBLE),
            ..Self::host_visible()
        }
    }

    /// The same parameters with another usage.
    pub const fn with_usage(mut self, usage: BufferUsage) -> Self {
        self.usage = usage;
        self
    }

    /// The same parameters with another minimum alignment.
    pub const fn with_min_alignment(mut self, min_alignment: u64) -> Self {
        self.min_alignment = min_alignment;
        self
    }
}

impl Default for BufferParams {
    fn default() -> Self {
        Self::device_local()
    }
}
