//! What a buffer may be used for.

bitflags::bitflags! {
    /// The ways a buffer may be used (IREE's `iree_hal_buffer_usage_t`). A buffer is created
    /// with a set; using it any other way is an error. Drivers use the set to pick memory.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct BufferUsage: u32 {
        /// Source of transfer (copy) operations.
        const TRANSFER_SOURCE = 1 << 0;
        /// Target of transfer (copy, fill, update) operations.
        const TRANSFER_TARGET = 1 << 1;
        /// Both ends of transfers.
        const TRANSFER = Self::TRANSFER_SOURCE.bits() | Self::TRANSFER_TARGET.bits();
        /// Holds the workgroup count of an indirect dispatch.
        const DISPATCH_INDIRECT_PARAMS = 1 << 8;
        /// Read as a uniform buffer by dispatches.
        const DISPATCH_UNIFORM_READ = 1 << 9;
        /// Read as a storage buffer by dispatches.
        const DISPATCH_STORAGE_READ = 1 << 10;
        /// Written as a storage buffer by dispatches.
        const DISPATCH_STORAGE_WRITE = 1 << 11;
        /// Read and written as a storage buffer by dispatches.
        const DISPATCH_STORAGE =
            Self::DISPATCH_STORAGE_READ.bits() | Self::DISPATCH_STORAGE_WRITE.bits();
        /// May be exported to another API or process.
        const SHARING_EXPORT = 1 << 16;
        /// May be replicated on several devices.
        const SHARING_REPLICATE = 1 << 17;
        /// May be used by several queues at once.
        const SHARING_CONCURRENT = 1 << 18;
        /// Contents never change after creation (constants).
        const SHARING_IMMUTABLE = 1 << 19;
        /// May be mapped for the duration of a scope.
        const MAPPING_SCOPED = 1 << 24;
        /// May stay mapped for the buffer's whole life.
        const MAPPING_PERSISTENT = 1 << 25;
        /// Mapping is wanted if it costs nothing, but not required.
        const MAPPING_OPTIONAL = 1 << 26;
        /// Mapped accesses are random (prefer cached memory).
        const MAPPING_ACCESS_RANDOM = 1 << 27;
        /// Mapped accesses are sequential writes (write-combined memory is fine).
        const MAPPING_ACCESS_SEQUENTIAL_WRITE = 1 << 28;
        /// Any kind of mapping.
        const MAPPING = Self::MAPPING_SCOPED.bits() | Self::MAPPING_PERSISTENT.bits();
        /// What a dispatch-bound buffer usually needs.
        const DEFAULT = Self::TRANSFER.bits() | Self::DISPATCH_STORAGE.bits();
    }
}

impl BufferUsage {
    /// Whether this usage requires the host to map the buffer (optional mapping does not).
    pub const fn requires_mapping(self) -> bool {
        self.intersects(Self::MAPPING) && !self.contains(Self::MAPPING_OPTIONAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_mapping_is_not_required() {
        assert!(BufferUsage::MAPPING_SCOPED.requires_mapping());
        assert!(!(BufferUsage::MAPPING_SCOPED | BufferUsage::MAPPING_OPTIONAL).requires_mapping());
        assert!(!BufferUsage::DEFAULT.requires_mapping());
    }
}
