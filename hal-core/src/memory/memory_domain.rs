//! Where memory lives, as far as connections between devices go.

/// Where a (device, memory type) pair's bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MemoryDomain {
    /// Ordinary host memory, usable by the host and by the device in place.
    Host,
    /// Memory behind a device; devices on the same `fabric` can reach each other's.
    Device {
        /// Which interconnect it hangs off.
        fabric: u32,
    },
}
