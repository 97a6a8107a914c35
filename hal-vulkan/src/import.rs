//! Importing host memory: in place with `VK_EXT_external_memory_host` (the pages around the
//! caller's bytes, rounded out to `minImportedHostPointerAlignment`, become device memory),
//! or, where the device refuses, as a copy in heap 0 that a read-write import writes back to
//! the caller's memory when the buffer is released.

use crate::instance::vk_error;
use crate::instance::Context;
use crate::memory::{allocate_memory, buffer_usage, destroy_buffer, free_memory};
use crate::objects::VkObject;
use crate::types::{Backing, BufferRec, VulkanDevice};
use ash::vk;
use hal_core::memory::{BufferParams, MemoryAccess};
use hal_core::HostMemory;
use hal_core::{Buffer, BufferInfo, BufferSpan, Error};

impl<'m> VulkanDevice<'m> {
    pub(crate) fn import(
        &mut self,
        memory: HostMemory<'m>,
        params: BufferParams,
    ) -> Result<Buffer, Error> {
        let heap = self.memory.heaps[0];
        heap.check(&params)?;
        let (ptr, len, writable) = match memory {
            HostMemory::ReadWrite(bytes) => (bytes.as_mut_ptr(), bytes.len(), true),
            HostMemory::ReadOnly(bytes) => (bytes.as_ptr().cast_mut(), bytes.len(), false),
        };
        let access = if writable {
            params.access
        } else {
            params
                .access
                .difference(MemoryAccess::WRITE | MemoryAccess::DISCARD)
        };
        let alignment = params.min_alignment.max(1);
        if ptr as u64 & (alignment - 1) != 0 {
            return Err(Error::InvalidArgument(
                "imported memory is not aligned as the parameters ask",
            ));
        }
        if len == 0 {
            return Err(Error::InvalidArgument("importing zero bytes"));
        }
        if self.buffers.len() >= self.buffers.capacity() {
            return Err(Error::TableFull {
                table: "buffer",
                capacity: self.buffers.capacity() as u32,
            });
        }
        let size = len as u64;
        let info = BufferInfo {
            size,
            memory_type: heap.types,
            usage: params.usage,
            access,
            chunk_size: size,
            imported: true,
        };
        if let Some(backing) = self.import_in_place(ptr, size) {
            return self.insert_buffer(BufferRec {
                info,
                backing,
                host_visible: true,
                write_back: None,
            });
        }
        // Refused or not available: a copy, one chunk, in heap 0.
        let placement = self
            .memory
            .allocate(&self.ctx, 0, size, heap.min_alignment)?;
        let rec = BufferRec {
            info,
            backing: Backing::Chunks(vec![placement]),
            host_visible: self.memory.pools[0].host_visible,
            write_back: writable.then_some((ptr, len)),
        };
        let buffer = match self.buffers.insert(rec) {
            Ok(b) => b,
            Err(e) => {
                self.memory.free(&self.ctx, placement);
                return Err(e);
            }
        };
        // SAFETY: the caller lent `len` bytes at `ptr` for 'm; read once, here.
        let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
        if let Err(e) = self.write_span(BufferSpan::new(buffer, 0, size), bytes) {
            let _ = self.release(buffer);
            return Err(e);
        }
        Ok(buffer)
    }

    /// Wraps `size` bytes at `ptr` as device memory, or `None` if the device will not.
    pub(crate) fn import_in_place(&mut self, ptr: *mut u8, size: u64) -> Option<Backing> {
        import_pages(&self.ctx, self.memory.pools[0].type_index, ptr, size)
    }
}

/// Wraps `size` bytes at `ptr` as device memory (preferring memory type `preferred`), or
/// `None` if the device will not. Only `&Context`: loads import windows on several threads.
pub(crate) fn import_pages(
    ctx: &Context,
    preferred: u32,
    ptr: *mut u8,
    size: u64,
) -> Option<Backing> {
    let ext = ctx.host_memory.as_ref()?;
    let align = ctx.limits.min_imported_host_pointer_alignment;
    let start = ptr as u64 & !(align - 1);
    let end = (ptr as u64)
        .checked_add(size)?
        .checked_next_multiple_of(align)?;
    let offset = ptr as u64 - start;
    let length = end - start;
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    let mut props = vk::MemoryHostPointerPropertiesEXT::default();
    // SAFETY: `start` is an aligned address inside pages the caller's memory occupies;
    // the call only inspects it.
    let queried = unsafe {
        (ext.fp().get_memory_host_pointer_properties_ext)(
            ctx.device.handle(),
            handle,
            start as *const core::ffi::c_void,
            &mut props,
        )
    };
    if queried != vk::Result::SUCCESS {
        return None;
    }
    let heap0 = preferred;
    let coherent = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let type_index = if props.memory_type_bits & (1 << heap0) != 0 {
        heap0
    } else {
        (0..ctx.memory_properties.memory_type_count).find(|&i| {
            props.memory_type_bits & (1 << i) != 0
                && ctx.memory_properties.memory_types[i as usize]
                    .property_flags
                    .contains(coherent)
        })?
    };
    let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
    let info = vk::BufferCreateInfo::default()
        .size(length)
        .usage(buffer_usage())
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .push_next(&mut external);
    // SAFETY: a valid create info (its chain lives across the call) on a live device.
    let buffer = unsafe { ctx.device.create_buffer(&info, None) }.ok()?;
    ctx.live.created(VkObject::Buffer);
    // SAFETY: a live buffer.
    let req = unsafe { ctx.device.get_buffer_memory_requirements(buffer) };
    if req.size > length || req.memory_type_bits & (1 << type_index) == 0 {
        destroy_buffer(ctx, buffer);
        return None;
    }
    let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
        .handle_type(handle)
        .host_pointer(start as *mut core::ffi::c_void);
    let memory = match allocate_memory(ctx, length, type_index, Some(&mut import)) {
        Ok(m) => m,
        Err(_) => {
            destroy_buffer(ctx, buffer);
            return None;
        }
    };
    // SAFETY: imported memory of an accepted type, as large as the buffer, bound once.
    let bound = unsafe { ctx.device.bind_buffer_memory(buffer, memory, 0) }
        .map_err(vk_error("vkBindBufferMemory"));
    if bound.is_err() {
        destroy_buffer(ctx, buffer);
        free_memory(ctx, memory);
        return None;
    }
    Some(Backing::Host {
        buffer,
        memory,
        offset,
        ptr,
    })
}
