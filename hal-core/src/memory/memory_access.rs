//! How a mapping or a command may touch a buffer's bytes.

bitflags::bitflags! {
    /// Access rights to a buffer (IREE's `iree_hal_memory_access_t`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemoryAccess: u16 {
        /// Contents may be read.
        const READ = 1 << 0;
        /// Contents may be written.
        const WRITE = 1 << 1;
        /// Prior contents may be discarded (write-only, no read-back needed).
        const DISCARD = 1 << 2;
        /// The range may alias other live ranges.
        const MAY_ALIAS = 1 << 3;
        /// Accesses may be unaligned.
        const UNALIGNED = 1 << 4;
        /// Discard, then write.
        const DISCARD_WRITE = Self::DISCARD.bits() | Self::WRITE.bits();
        /// Everything.
        const ALL = Self::READ.bits()
            | Self::WRITE.bits()
            | Self::DISCARD.bits()
            | Self::MAY_ALIAS.bits()
            | Self::UNALIGNED.bits();
    }
}
