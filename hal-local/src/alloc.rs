//! The allocator a local device uses for its memory and its command slots.
//!
//! [`LocalStorage`](crate::LocalStorage)'s last type parameter picks it (and so
//! [`LocalDevice`](crate::LocalDevice)'s). Two are built in:
//!
//! | allocator | frees | code on Cortex-M4 (`opt-level = "z"`) | metadata (RAM) |
//! |---|---|---|---|
//! | [`Tlsf`] (the default) | any order, O(1), space back at once | about 4.5 KB | 3 KiB of list heads on a 32-bit target (7 KiB on a 64-bit host; fewer with [`Tlsf`]'s first-level bound), plus nodes |
//! | [`Bump`] ([`Arena`]) | LIFO at once; out of order only when all above are freed | about 0.5 KB | 24 B per record |
//!
//! (The `minimal` firmware of `cargo xtask size` on `thumbv7em-none-eabihf`: 4.2 KB less
//! flash with the bump allocator for its memory and its command slots, and two sets of
//! TLSF list heads, 3 KiB each on a 32-bit target, gone from RAM.)
//!
//! The bump allocator suits firmware that allocates its buffers and command buffers at
//! start-up and releases them in reverse order (or never): the `minimal` firmware of
//! `cargo xtask size` uses it. A device that frees out of order and allocates again
//! should keep TLSF, or the bump allocator runs out while the space it holds is free.
//!
//! ```
//! use hal_core::memory::BufferParams;
//! use hal_core::Device;
//! use hal_local::alloc::Bump;
//! use hal_local::{LocalConfig, LocalDevice, LocalStorage};
//!
//! let mut storage: LocalStorage<4, 4, 4, 0, Bump<4>> = LocalStorage::EMPTY;
//! let mut memory = [0u8; 4096];
//! let mut device = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT)?;
//! let a = device.allocate_buffer(BufferParams::device_local(), 1024)?;
//! let b = device.allocate_buffer(BufferParams::device_local(), 1024)?;
//! device.release_buffer(b)?; // the top: its space is free again at once
//! let c = device.allocate_buffer(BufferParams::device_local(), 2048)?; // where `b` was
//! device.release_buffer(c)?;
//! device.release_buffer(a)?;
//! # Ok::<(), hal_core::Error>(())
//! ```

use hal_core::memory::alloc::RangeAllocator;
pub use hal_core::memory::alloc::{first_levels, Arena, Tlsf};

/// A bump allocator with LIFO frees, marks and reset: `hal-core`'s [`Arena`], with room for
/// `RECORDS` allocations (live, or freed below a live one) at a time.
pub type Bump<const RECORDS: usize> = Arena<RECORDS>;

/// An allocator a [`LocalDevice`](crate::LocalDevice) can use for its memory and its command
/// slots. Implement it (with [`RangeAllocator`]) to plug in your own.
pub trait DeviceAllocator: RangeAllocator {
    /// An allocator over no bytes. It must be all zero bytes, so that a `static` device
    /// storage built from [`LocalStorage::EMPTY`](crate::LocalStorage::EMPTY) lands in `.bss`
    /// (`cargo xtask size` checks it).
    const EMPTY: Self;

    /// An empty allocator over `capacity` bytes.
    fn over(capacity: u64) -> Self;
}

impl<const NODES: usize, const FL: usize> DeviceAllocator for Tlsf<NODES, FL> {
    const EMPTY: Self = Tlsf::new(0);

    fn over(capacity: u64) -> Self {
        Tlsf::new(capacity)
    }
}

impl<const RECORDS: usize> DeviceAllocator for Arena<RECORDS> {
    const EMPTY: Self = Arena::new(0);

    fn over(capacity: u64) -> Self {
        Arena::new(capacity)
    }
}
