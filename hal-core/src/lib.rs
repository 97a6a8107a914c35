//! Ember's hardware abstraction layer core: `no_std`, with no heap.
//!
//! This crate holds what every Ember driver shares and nothing that knows a driver exists:
//! the memory model ([`memory`]) and the allocators that hand out *offsets* inside a block of
//! device memory ([`memory::alloc`]). All allocator bookkeeping lives out of band, in storage
//! sized by const generics, so the allocators work in firmware with no global allocator and
//! over memory the host cannot touch (a `VkDeviceMemory`, a DSP's SRAM).
//!
//! ```
//! use hal_core::memory::alloc::{RangeAllocator, Tlsf};
//!
//! // A 1 MiB block of device memory, with room for 64 blocks of metadata.
//! let mut tlsf = Tlsf::<64>::new(1 << 20);
//! let weights = tlsf.allocate(4096, 256)?;
//! assert_eq!(weights.offset % 256, 0);
//! tlsf.free(weights)?;
//! assert_eq!(tlsf.stats().largest_free_range, 1 << 20);
//! # Ok::<(), hal_core::memory::alloc::AllocError>(())
//! ```
//!
//! Features: `defmt` implements `defmt::Format` on the public types for firmware logs.
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

mod error;
pub mod memory;

pub use error::Error;
