//! Ember's Vulkan driver: hal-core's [`Device`](hal_core::Device) trait on Vulkan 1.2 through
//! `ash`, for edge GPUs with unified memory, discrete GPUs, and Mesa's lavapipe in CI.
//!
//! - **Instance and device** ([`VulkanConfig`]): `EMBER_VULKAN_DEVICE` (index or name) picks
//!   the physical device; the Khronos validation layer is on with `EMBER_VULKAN_VALIDATION=1`
//!   or [`VulkanConfig::validation`], with a messenger that counts warnings and errors
//!   ([`VulkanDevice::validation_messages`]). Queues: compute (everything runs there), and the
//!   sparse-binding queue.
//! - **Memory**: heap 0 is a host-visible, coherent memory type (device-local too where the
//!   memory is unified), heap 1 device-only memory where the device has it. Blocks of
//!   `VkDeviceMemory` are sub-allocated with hal-core's TLSF allocator; large buffers get
//!   dedicated blocks. Chunked buffers are one sparse `VkBuffer` where the device has sparse
//!   binding, one allocation per chunk otherwise ([`VulkanConfig::sparse_binding`]).
//! - **Import**: host memory in place with `VK_EXT_external_memory_host`, else a copy
//!   written back on release.
//! - **Executables**: compute pipelines from SPIR-V (the built-in kernels and the op set
//!   from `ember_kernels_wgsl`'s one table by name), one pipeline layout with push
//!   descriptors and one 128-byte push block.
//! - **Commands**: hal-core's command lists, planned and checked at execution, recorded into
//!   a `VkCommandBuffer` that reusable command buffers keep and replay for the same table.
//!   A dispatch of a kernel is checked against its specification in `ember-kernels` (a
//!   built-in kernel's contract, an op's parameters: the check hal-local's kernel makes)
//!   before it is recorded.
//! - **Semaphores and queue**: timelines kept on the host with hal-core's failure state;
//!   operations run in order once their waits are reached and are submitted without host
//!   waits, ordered on the GPU by one queue and a progress timeline semaphore; the host
//!   blocks in `wait_semaphores`, host transfers and mappings, and where it must destroy or
//!   rewrite what pending work may use (unloading a pipeline, `trim`, a command buffer's
//!   new upload data, sparse binds, loads, an allocation that ran out of memory).
//! - **Loads** ([`VulkanDevice::load_from_host`]): large host data (constant pools) moved by
//!   pipelined GPU copies from imported windows of the caller's pages, or through staging
//!   buffers bounded to twice `staging_bytes`.
//!
//! ```no_run
//! use hal_core::{BufferSpan, Device, Submit};
//! use hal_core::memory::BufferParams;
//! use hal_vulkan::{VulkanConfig, VulkanDevice};
//!
//! let mut device = VulkanDevice::new(VulkanConfig::default())?;
//! let buffer = device.allocate_buffer(BufferParams::host_visible(), 256)?;
//! device.queue_fill(Submit::NOW, BufferSpan::whole(buffer), &[0xAB])?;
//! let mut out = [0u8; 256];
//! device.read_buffer(BufferSpan::whole(buffer), &mut out)?;
//! assert!(out.iter().all(|&b| b == 0xAB));
//! device.release_buffer(buffer)?;
//! # Ok::<(), hal_core::Error>(())
//! ```

mod buffer;
mod command;
pub mod config;
mod device;
mod driver;
mod executable;
mod import;
mod inflight;
mod instance;
mod load;
mod memory;
pub mod objects;
mod profile;
mod sparse;
mod staging;
mod transfer;
mod types;

pub use config::VulkanConfig;
pub use executable::check_spirv;
pub use hal_core::HostMemory;
pub use instance::ValidationMessages;
pub use load::{HostLoadOptions, LoadPath, LoadStats};
pub use objects::{VkObject, VkObjectCounts};
pub use profile::DispatchTime;
pub use transfer::VulkanMapping;
pub use types::{VulkanDevice, MAX_BUFFERS, MAX_COMMAND_SLOTS, MAX_OBJECTS, MAX_PENDING};
