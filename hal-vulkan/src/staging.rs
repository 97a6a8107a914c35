//! Internal host-visible buffers: staging for host transfers of device-only memory, upload
//! space for update data and fill edges, and the dummy buffer unused descriptors point at.
//! Their memory is the driver's own and does not count in any heap's statistics.

use crate::instance::Context;
use crate::memory::{allocate_memory, create_buffer, destroy_buffer, free_memory};
use ash::vk;
use hal_core::Error;

/// A host-visible, coherent buffer with its own memory, mapped for its life.
pub(crate) struct InternalBuffer {
    pub(crate) buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub(crate) size: u64,
    ptr: *mut u8,
}

impl InternalBuffer {
    /// `size` bytes of memory type `type_index` (host-visible and coherent).
    pub(crate) fn new(ctx: &Context, size: u64, type_index: u32) -> Result<Self, Error> {
        Self::with_type(ctx, size, |_| type_index)
    }

    /// `size` bytes of host-visible, coherent memory that the host caches where the device
    /// has such a type (`fallback` otherwise): the host writes it at memory speed, where
    /// uncached (write-combined) memory takes several threads to fill at the bus's speed.
    pub(crate) fn new_cached(ctx: &Context, size: u64, fallback: u32) -> Result<Self, Error> {
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE
            | vk::MemoryPropertyFlags::HOST_COHERENT
            | vk::MemoryPropertyFlags::HOST_CACHED;
        let props = ctx.memory_properties;
        Self::with_type(ctx, size, |bits| {
            (0..props.memory_type_count)
                .find(|&i| {
                    bits & (1 << i) != 0
                        && props.memory_types[i as usize]
                            .property_flags
                            .contains(wanted)
                })
                .unwrap_or(fallback)
        })
    }

    /// `size` bytes of the memory type `pick` chooses from the buffer's acceptable types.
    fn with_type(ctx: &Context, size: u64, pick: impl FnOnce(u32) -> u32) -> Result<Self, Error> {
        let size = size.max(16);
        let buffer = create_buffer(ctx, size, vk::BufferCreateFlags::empty())?;
        // SAFETY: a live buffer of this device.
        let req = unsafe { ctx.device.get_buffer_memory_requirements(buffer) };
        let type_index = pick(req.memory_type_bits);
        let memory = match allocate_memory(ctx, req.size, type_index, None) {
            Ok(m) => m,
            Err(e) => {
                destroy_buffer(ctx, buffer);
                return Err(e);
            }
        };
        // SAFETY: memory of an accepted type and size, bound once; then mapped once whole.
        let mapped = unsafe {
            ctx.device
                .bind_buffer_memory(buffer, memory, 0)
                .and_then(|()| {
                    ctx.device
                        .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                })
        };
        match mapped {
            Ok(ptr) => Ok(Self {
                buffer,
                memory,
                size,
                ptr: ptr.cast(),
            }),
            Err(e) => {
                destroy_buffer(ctx, buffer);
                free_memory(ctx, memory);
                Err(crate::instance::vk_error("staging buffer")(e))
            }
        }
    }

    /// The mapped bytes.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the whole buffer's memory is mapped for its life; `&mut self` makes this
        // the only view, and no device work touches it while the host does (every submission
        // is waited for).
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.size as usize) }
    }

    pub(crate) fn destroy(self, ctx: &Context) {
        destroy_buffer(ctx, self.buffer);
        free_memory(ctx, self.memory);
    }
}
