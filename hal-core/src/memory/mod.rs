//! The memory model: what kinds of memory a device has, how a buffer may be used and accessed,
//! and the allocators that place buffers inside blocks of device memory.

pub mod alloc;
mod buffer_params;
mod buffer_usage;
#[cfg(feature = "defmt")]
mod defmt_bits;
mod memory_access;
mod memory_domain;
mod memory_heap;
mod memory_type;

pub use buffer_params::BufferParams;
pub use buffer_usage::BufferUsage;
pub use memory_access::MemoryAccess;
pub use memory_domain::MemoryDomain;
pub use memory_heap::{MemoryHeap, ParamsError};
pub use memory_type::MemoryType;
