//! Chunked buffers as one sparse `VkBuffer`: chunks of memory sub-allocated like any buffer's
//! and bound on the sparse queue. Devices without sparse binding (or with it turned off) take
//! the fallback in `buffer.rs`: one allocation per chunk, commands split per chunk.

use crate::instance::{vk_error, Context};
use crate::memory::{create_buffer, destroy_buffer, Placement};
use crate::types::{Backing, SparseHeap, VulkanDevice};
use ash::vk;
use hal_core::Error;

/// Probes sparse binding for a heap of memory type `type_index` whose chunks are at most
/// `max_chunk` bytes: `None` if the device cannot (or may not) do it there.
pub(crate) fn probe(ctx: &Context, type_index: u32, max_chunk: u64) -> Option<SparseHeap> {
    ctx.sparse_queue?;
    let buffer = create_buffer(
        ctx,
        max_chunk.max(1 << 16) * 2,
        vk::BufferCreateFlags::SPARSE_BINDING,
    )
    .ok()?;
    // SAFETY: a live buffer of this device.
    let req = unsafe { ctx.device.get_buffer_memory_requirements(buffer) };
    destroy_buffer(ctx, buffer);
    if req.memory_type_bits & (1 << type_index) == 0 || !req.alignment.is_power_of_two() {
        return None;
    }
    let chunk_size = max_chunk & !(req.alignment - 1);
    (chunk_size > 0).then_some(SparseHeap {
        alignment: req.alignment,
        chunk_size,
    })
}

impl VulkanDevice<'_> {
    /// The sparse bind alignment of `heap`, if chunked buffers there are sparse.
    pub(crate) fn sparse_alignment(&self, heap: usize, alignment: u64) -> Option<u64> {
        self.sparse
            .get(heap)
            .copied()
            .flatten()
            .filter(|s| s.chunk_size % alignment == 0)
            .map(|s| s.alignment)
    }

    /// The chunk size of sparse buffers in `heap`.
    pub(crate) fn sparse_chunk_size(&self, heap: usize) -> u64 {
        self.sparse
            .get(heap)
            .copied()
            .flatten()
            .map_or(0, |s| s.chunk_size)
    }

    /// A sparse buffer of `size` bytes in `heap`, every chunk bound before it returns.
    pub(crate) fn allocate_sparse(
        &mut self,
        heap: usize,
        size: u64,
        alignment: u64,
    ) -> Result<Backing, Error> {
        let chunk_size = self.sparse_chunk_size(heap);
        let buffer = create_buffer(&self.ctx, size, vk::BufferCreateFlags::SPARSE_BINDING)?;
        // SAFETY: a live buffer of this device.
        let req = unsafe { self.ctx.device.get_buffer_memory_requirements(buffer) };
        let mut chunks: Vec<Placement> = Vec::new();
        let mut binds = Vec::new();
        let mut at = 0;
        let mut failed = None;
        while at < req.size {
            let len = chunk_size.min(req.size - at);
            match self
                .memory
                .allocate(&self.ctx, heap, len, alignment.max(req.alignment))
            {
                Ok(p) => {
                    let memory = match self.memory.block(p) {
                        Ok(b) => b.memory,
                        Err(e) => {
                            failed = Some(e);
                            chunks.push(p);
                            break;
                        }
                    };
                    binds.push(
                        vk::SparseMemoryBind::default()
                            .resource_offset(at)
                            .size(len)
                            .memory(memory)
                            .memory_offset(p.range.offset),
                    );
                    chunks.push(p);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            at += len;
        }
        let result = match failed {
            Some(e) => Err(e),
            None => self.bind_sparse(buffer, &binds),
        };
        match result {
            Ok(()) => Ok(Backing::Sparse { buffer, chunks }),
            Err(e) => {
                destroy_buffer(&self.ctx, buffer);
                for p in chunks {
                    self.memory.free(&self.ctx, p);
                }
                Err(e)
            }
        }
    }

    /// Binds `binds` to `buffer` on the sparse queue and waits for it.
    fn bind_sparse(
        &mut self,
        buffer: vk::Buffer,
        binds: &[vk::SparseMemoryBind],
    ) -> Result<(), Error> {
        let queue = self
            .ctx
            .sparse_queue
            .ok_or(Error::Unsupported("no sparse queue"))?;
        let buffer_binds = [vk::SparseBufferMemoryBindInfo::default()
            .buffer(buffer)
            .binds(binds)];
        // The bind signals the progress timeline from another queue: everything submitted
        // before must have signalled its (lower) value first, or the timeline would be
        // signalled out of order and earlier work counted as done.
        self.ctx.settle()?;
        self.ctx.next_value += 1;
        let values = [self.ctx.next_value];
        let signal = [self.ctx.timeline];
        let mut timeline =
            vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let info = vk::BindSparseInfo::default()
            .buffer_binds(&buffer_binds)
            .signal_semaphores(&signal)
            .push_next(&mut timeline);
        // SAFETY: the buffer is a live sparse buffer with no bindings yet, each bind names
        // live memory of an accepted type at an aligned offset, and everything the info
        // points at lives across the call.
        unsafe {
            self.ctx
                .device
                .queue_bind_sparse(queue, &[info], vk::Fence::null())
        }
        .map_err(vk_error("vkQueueBindSparse"))
        .inspect_err(|_| {
            // Nothing signals this value now: later waits must not count on it.
            self.ctx.next_value -= 1;
        })?;
        self.ctx.wait_value(self.ctx.next_value)
    }
}
