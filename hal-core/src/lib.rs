//! Ember's hardware abstraction layer core: `no_std`, with no heap.
//!
//! This crate holds what every Ember driver shares and nothing that knows a driver exists
//! (IREE's `runtime/src/iree/hal/`, rebuilt for firmware):
//! - [`memory`]: the memory model and the allocators that hand out *offsets* inside a block
//!   of device memory, with all bookkeeping out of band;
//! - [`device::Device`]: the driver interface, statically dispatched;
//! - [`buffer`], [`chunk`]: buffers, subspans, and chunked buffers larger than one allocation;
//! - [`command`]: validated command lists, reusable with binding tables;
//! - [`semaphore`]: timeline semaphores with failure propagation, and queue submissions;
//! - [`queue`]: the queue every driver shares (parked work, submission checks, failure
//!   propagation), with the driver hooks it runs on;
//! - [`connection`]: memory connections between devices and copies along them;
//! - [`shared`]: a device several cores share, behind a spin lock;
//! - [`memo`]: memoization of resources per (device, queue affinity);
//! - [`session`]: a module loaded on a device, invoked with one `queue_alloca` per call;
//! - [`handle`]: generation-checked handles into fixed-capacity tables;
//! - [`kernel`]: what a kernel refuses, reported the same way by every driver;
//! - [`contract`]: a kernel's constants, bindings and shape rules as data, and the check
//!   every driver runs against them;
//! - [`module`]: the module format, zero-copy decoding and validation, and (with `alloc`)
//!   the builder and memory planner.
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
//! Features: `defmt` implements `defmt::Format` on the public types for firmware logs;
//! `alloc` adds the module builder and memory planner (host tools).
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod buffer;
pub mod chunk;
pub mod command;
pub mod connection;
pub mod contract;
pub mod device;
mod error;
pub mod executable;
pub mod handle;
pub mod kernel;
pub mod memo;
pub mod memory;
pub mod module;
pub mod queue;
pub mod semaphore;
pub mod session;
pub mod shared;
pub mod zeroed;

pub use buffer::{Buffer, BufferInfo, BufferSpan, WHOLE};
pub use command::{BufferRef, CommandBuffer, CommandBufferMode, Record, Workgroups};
pub use connection::MemoryConnection;
pub use device::{Device, DeviceId, HostMemory, HostSource, Mapped, PersistentMapping};
pub use error::{Error, ShortName, StatusCode};
pub use executable::{Executable, ExecutableSource};
pub use memo::{MemoCache, MemoKey};
pub use memory::MemoryDomain;
pub use semaphore::{QueueAffinity, Semaphore, SemaphoreValue, Submit, Timeout};
pub use session::{LoadError, LoadOptions, ResultMemory, Session};
