//! Where memory lives and who can see it.

bitflags::bitflags! {
    /// Properties of a kind of memory (IREE's `iree_hal_memory_type_t`, Vulkan's memory
    /// property flags). A heap offers a set of these; buffer parameters ask for a set.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemoryType: u32 {
        /// Let the driver pick the best memory for the usage; satisfied by any heap.
        const OPTIMAL = 1 << 0;
        /// The host can map this memory.
        const HOST_VISIBLE = 1 << 1;
        /// Host writes are visible to the device without explicit flushes, and vice versa.
        const HOST_COHERENT = 1 << 2;
        /// Host reads go through a CPU cache (fast reads; may need invalidation).
        const HOST_CACHED = 1 << 3;
        /// Memory local to the host; the device reaches it over a bus.
        const HOST_LOCAL = Self::HOST_VISIBLE.bits() | (1 << 4);
        /// The device can use this memory.
        const DEVICE_VISIBLE = 1 << 5;
        /// Memory local to the device: fastest for it, possibly invisible to the host.
        const DEVICE_LOCAL = Self::DEVICE_VISIBLE.bits() | (1 << 6);
    }
}

impl MemoryType {
    /// Whether the host can read and write this memory through a mapping.
    pub const fn is_mappable(self) -> bool {
        self.contains(Self::HOST_VISIBLE)
    }

    /// Whether memory of type `self` satisfies a request for `wanted`. `OPTIMAL` in the
    /// request is a hint and is satisfied by anything.
    pub const fn satisfies(self, wanted: Self) -> bool {
        let required = wanted.difference(Self::OPTIMAL);
        self.contains(required)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_types_imply_visibility() {
        assert!(MemoryType::DEVICE_LOCAL.contains(MemoryType::DEVICE_VISIBLE));
        assert!(MemoryType::HOST_LOCAL.is_mappable());
        assert!(!MemoryType::DEVICE_LOCAL.is_mappable());
    }

    #[test]
    fn optimal_is_only_a_hint() {
        let unified = MemoryType::DEVICE_LOCAL | MemoryType::HOST_VISIBLE;
        assert!(unified.satisfies(MemoryType::OPTIMAL | MemoryType::HOST_VISIBLE));
        assert!(!MemoryType::DEVICE_LOCAL.satisfies(MemoryType::HOST_VISIBLE));
        assert!(MemoryType::empty().satisfies(MemoryType::OPTIMAL));
    }
}
