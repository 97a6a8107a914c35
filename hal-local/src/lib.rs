//! Ember's local-CPU driver: `no_std`, heap-free, inline by default.
//!
//! A [`LocalDevice`] runs over a memory region the board hands it. Its one heap is
//! DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT: the CPU is the device, so mapping costs nothing
//! and its memory connection to the host is `Unified`. Buffers come from a TLSF allocator
//! (chunked past `max_allocation_size`) or, for firmware that frees in reverse order, a bump
//! allocator ([`alloc`]), `queue_alloca` from an arena at the region's end. Firmware that never
//! waits can drop the parked-operation queue (`PENDING = 0`, see [`LocalStorage`]).
//! A dispatch calls a kernel from a static table ([`kernels::BUILTIN`] or the program's own)
//! once per workgroup; with the `threads` feature and `workers > 1` a shared kernel's
//! workgroups, and an exclusive kernel's output tiles, run on a std worker pool; with
//! `cores`, on a [`team::Team`] of cores that multi-core firmware hands the device.
//!
//! ```
//! use hal_core::{BufferSpan, Device, Submit};
//! use hal_core::memory::BufferParams;
//! use hal_local::{LocalConfig, LocalDevice, LocalStorage};
//!
//! let mut storage: LocalStorage<16, 256, 64, 4> = LocalStorage::EMPTY;
//! let mut memory = [0u8; 64 * 1024];
//! let mut device = LocalDevice::new(&mut storage, &mut memory, LocalConfig::default())?;
//! let buffer = device.allocate_buffer(BufferParams::host_visible(), 256)?;
//! device.queue_fill(Submit::NOW, BufferSpan::whole(buffer), &[0xAB])?;
//! let mut out = [0u8; 256];
//! device.read_buffer(BufferSpan::whole(buffer), &mut out)?;
//! assert!(out.iter().all(|&b| b == 0xAB));
//! device.release_buffer(buffer)?;
//! # Ok::<(), hal_core::Error>(())
//! ```
//!
//! Features: `threads` (std worker pool), `cores` (a team of cores, no std), `std`, `defmt`.
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

#[cfg(feature = "std")]
extern crate std;

pub mod alloc;
mod buffer;
pub mod config;
pub mod device;
#[cfg(feature = "tflite")]
pub mod direct;
mod driver;
pub mod kernel;
pub mod kernels;
mod mapping;
mod memory;
#[cfg(feature = "threads")]
mod pool;
pub mod program;
mod replay;
mod storage;
#[cfg(feature = "cores")]
pub mod team;
mod types;
pub mod words;
#[cfg(feature = "parallel")]
pub mod workers;

pub use config::LocalConfig;
pub use hal_core::HostMemory;
pub use mapping::LocalMapping;
pub use storage::LocalStorage;
pub use types::{LocalDevice, MIN_ALIGNMENT};
