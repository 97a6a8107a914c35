//! Device memory: Vulkan memory types as HAL heaps, and blocks of `VkDeviceMemory`
//! sub-allocated with hal-core's allocators — size-class slabs for small buffers over TLSF
//! for the rest — while large buffers get dedicated blocks.
//!
//! Every block carries one `VkBuffer` over all of it, so a HAL buffer is a range of a block's
//! buffer: no Vulkan object per HAL buffer. Host-visible blocks stay mapped for their life.

use crate::instance::{vk_error, Context};
use crate::objects::VkObject;
use ash::vk;
use hal_core::memory::alloc::{AllocError, AllocStats, Range, RangeAllocator, Slab, Tlsf};
use hal_core::memory::{BufferUsage, MemoryHeap, MemoryType};
use hal_core::Error;

/// Metadata nodes per block's allocator.
const NODES: usize = 512;
/// Spans the slab of a block may take from its TLSF allocator.
const SPANS: usize = 64;
/// Size classes small buffers are served from (a slab per class in each block).
const SMALL_CLASSES: [u64; 3] = [256, 1024, 4096];

/// A block's sub-allocator: size-class slabs for small buffers over a TLSF allocator for
/// everything else (plain TLSF where the block is too small for the slabs' spans).
enum SubAllocator {
    Slab(Box<Slab<Tlsf<NODES>, SPANS>>),
    Tlsf(Box<Tlsf<NODES>>),
}

impl SubAllocator {
    fn new(size: u64) -> Self {
        match Slab::new(Tlsf::new(size), &SMALL_CLASSES) {
            Ok(slab) => Self::Slab(Box::new(slab)),
            Err(_) => Self::Tlsf(Box::new(Tlsf::new(size))),
        }
    }

    fn allocate(&mut self, size: u64, alignment: u64) -> Result<Range, AllocError> {
        match self {
            Self::Slab(a) => a.allocate(size, alignment),
            Self::Tlsf(a) => a.allocate(size, alignment),
        }
    }

    fn free(&mut self, range: Range) -> Result<(), AllocError> {
        match self {
            Self::Slab(a) => a.free(range),
            Self::Tlsf(a) => a.free(range),
        }
    }

    fn stats(&self) -> AllocStats {
        match self {
            Self::Slab(a) => a.stats(),
            Self::Tlsf(a) => a.stats(),
        }
    }
}

/// Usage of every buffer the driver makes over device memory.
pub(crate) fn buffer_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::INDIRECT_BUFFER
}

/// One `VkDeviceMemory` with a buffer over it.
pub(crate) struct Block {
    pub(crate) memory: vk::DeviceMemory,
    pub(crate) buffer: vk::Buffer,
    pub(crate) size: u64,
    /// The mapping of the whole block (null if not host-visible).
    pub(crate) mapped: *mut u8,
    /// The sub-allocator; `None` for a dedicated block (one allocation at 0).
    alloc: Option<SubAllocator>,
    live: u32,
}

/// Where an allocation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    pub(crate) heap: u8,
    pub(crate) block: u32,
    pub(crate) range: Range,
}

/// One HAL heap: a Vulkan memory type, its blocks and statistics.
pub(crate) struct Pool {
    pub(crate) heap: MemoryHeap,
    pub(crate) type_index: u32,
    pub(crate) host_visible: bool,
    blocks: Vec<Option<Block>>,
    block_bytes: u64,
    block_size: u64,
    in_use: u64,
    peak: u64,
    count: u64,
}

/// Every heap of a device.
pub(crate) struct Memory {
    pub(crate) pools: Vec<Pool>,
    pub(crate) heaps: Vec<MemoryHeap>,
    /// Blocks destroyed so far (their `VkBuffer` handles may be reused by new blocks).
    pub(crate) destroyed_blocks: u64,
}

fn hal_types(flags: vk::MemoryPropertyFlags) -> MemoryType {
    let mut t = MemoryType::empty();
    if flags.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL) {
        t |= MemoryType::DEVICE_LOCAL;
    } else {
        t |= MemoryType::DEVICE_VISIBLE | MemoryType::HOST_LOCAL;
    }
    if flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE) {
        t |= MemoryType::HOST_VISIBLE | MemoryType::HOST_COHERENT;
    }
    if flags.contains(vk::MemoryPropertyFlags::HOST_CACHED) {
        t |= MemoryType::HOST_CACHED;
    }
    t
}

/// Creates a buffer of `size` bytes rounded up to whole 4-byte words (so a storage
/// descriptor can always cover the words holding its bytes) with the driver's usage;
/// counted.
pub(crate) fn create_buffer(
    ctx: &Context,
    size: u64,
    flags: vk::BufferCreateFlags,
) -> Result<vk::Buffer, Error> {
    let info = vk::BufferCreateInfo::default()
        .size(size.div_ceil(4) * 4)
        .usage(buffer_usage())
        .flags(flags)
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: a valid create info on a live device.
    let buffer =
        unsafe { ctx.device.create_buffer(&info, None) }.map_err(vk_error("vkCreateBuffer"))?;
    ctx.live.created(VkObject::Buffer);
    Ok(buffer)
}

/// Destroys a buffer made by [`create_buffer`] (not in use by pending work).
pub(crate) fn destroy_buffer(ctx: &Context, buffer: vk::Buffer) {
    // SAFETY: the buffer is live, made on this device, and no pending work uses it (the
    // driver waits for every submission).
    unsafe { ctx.device.destroy_buffer(buffer, None) };
    ctx.live.destroyed(VkObject::Buffer);
}

/// Allocates `size` bytes of memory type `type_index`; counted.
pub(crate) fn allocate_memory(
    ctx: &Context,
    size: u64,
    type_index: u32,
    next: Option<&mut vk::ImportMemoryHostPointerInfoEXT<'_>>,
) -> Result<vk::DeviceMemory, Error> {
    let mut info = vk::MemoryAllocateInfo::default()
        .allocation_size(size)
        .memory_type_index(type_index);
    if let Some(next) = next {
        info = info.push_next(next);
    }
    // SAFETY: a valid allocate info (its chain lives across the call) on a live device.
    let memory =
        unsafe { ctx.device.allocate_memory(&info, None) }.map_err(vk_error("vkAllocateMemory"))?;
    ctx.live.created(VkObject::Memory);
    Ok(memory)
}

/// Frees memory made by [`allocate_memory`] (unmapped implicitly).
pub(crate) fn free_memory(ctx: &Context, memory: vk::DeviceMemory) {
    // SAFETY: live memory of this device that no pending work uses; freeing unmaps it.
    unsafe { ctx.device.free_memory(memory, None) };
    ctx.live.destroyed(VkObject::Memory);
}

impl Block {
    /// An emptied sub-allocated block kept for reuse (emptied dedicated blocks are freed at
    /// once, so every empty block is one).
    fn is_spare(&self) -> bool {
        self.live == 0 && self.alloc.is_some()
    }

    /// A block of `size` bytes of memory type `type_index`, with a buffer over it; mapped when
    /// `host_visible`. `suballocated` gives it an allocator.
    fn new(
        ctx: &Context,
        size: u64,
        type_index: u32,
        host_visible: bool,
        suballocated: bool,
    ) -> Result<Self, Error> {
        let buffer = create_buffer(ctx, size, vk::BufferCreateFlags::empty())?;
        // SAFETY: a live buffer of this device.
        let req = unsafe { ctx.device.get_buffer_memory_requirements(buffer) };
        if req.memory_type_bits & (1 << type_index) == 0 {
            destroy_buffer(ctx, buffer);
            return Err(Error::Unsupported(
                "the memory type cannot back storage buffers",
            ));
        }
        let memory = match allocate_memory(ctx, req.size, type_index, None) {
            Ok(m) => m,
            Err(e) => {
                destroy_buffer(ctx, buffer);
                return Err(e);
            }
        };
        // SAFETY: memory of a type the buffer accepts, large enough, bound once at 0.
        let bound = unsafe { ctx.device.bind_buffer_memory(buffer, memory, 0) }
            .map_err(vk_error("vkBindBufferMemory"));
        let mapped = match bound {
            Ok(()) if host_visible => {
                // SAFETY: host-visible memory, not mapped yet, whole range.
                unsafe {
                    ctx.device
                        .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                }
                .map(|p| p.cast::<u8>())
                .map_err(vk_error("vkMapMemory"))
            }
            Ok(()) => Ok(core::ptr::null_mut()),
            Err(e) => Err(e),
        };
        let mapped = match mapped {
            Ok(p) => p,
            Err(e) => {
                destroy_buffer(ctx, buffer);
                free_memory(ctx, memory);
                return Err(e);
            }
        };
        Ok(Self {
            memory,
            buffer,
            size,
            mapped,
            alloc: suballocated.then(|| SubAllocator::new(size)),
            live: 0,
        })
    }

    fn destroy(self, ctx: &Context) {
        destroy_buffer(ctx, self.buffer);
        free_memory(ctx, self.memory);
    }
}

/// The most a discrete GPU's host-mappable device memory heap offers: inputs the host writes
/// need little, and a classic BAR is this size.
const BAR_BUDGET: u64 = 256 << 20;

impl Memory {
    /// The heaps of a device: heap 0 host-visible (and coherent), then device-only memory,
    /// then last, on a discrete GPU, device-local memory the host can map, where it has
    /// some; each a Vulkan memory type that can back storage buffers.
    pub(crate) fn new(
        ctx: &Context,
        max_allocation_size: u64,
        budget: u64,
        block_size: u64,
        emulate_device_only: bool,
    ) -> Result<Self, Error> {
        // Which memory types can back the driver's buffers.
        let probe = create_buffer(ctx, 4096, vk::BufferCreateFlags::empty())?;
        // SAFETY: a live buffer of this device.
        let req = unsafe { ctx.device.get_buffer_memory_requirements(probe) };
        destroy_buffer(ctx, probe);
        let props = &ctx.memory_properties;
        let types: Vec<(u32, vk::MemoryType)> = (0..props.memory_type_count)
            .map(|i| (i, props.memory_types[i as usize]))
            .filter(|(i, _)| req.memory_type_bits & (1 << i) != 0)
            .collect();
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let unified = ctx.device_type == vk::PhysicalDeviceType::CPU
            || ctx.device_type == vk::PhysicalDeviceType::INTEGRATED_GPU;
        let find = |want: vk::MemoryPropertyFlags, avoid: vk::MemoryPropertyFlags| {
            types
                .iter()
                .find(|(_, t)| {
                    t.property_flags.contains(want) && !t.property_flags.intersects(avoid)
                })
                .copied()
        };
        // Heap 0: host-visible and coherent; on unified memory the device-local one.
        let host = if unified {
            find(
                coherent | vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::empty(),
            )
            .or_else(|| find(coherent, vk::MemoryPropertyFlags::empty()))
        } else {
            find(
                coherent | vk::MemoryPropertyFlags::HOST_CACHED,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            )
            .or_else(|| find(coherent, vk::MemoryPropertyFlags::DEVICE_LOCAL))
            .or_else(|| find(coherent, vk::MemoryPropertyFlags::empty()))
        }
        .ok_or(Error::Unsupported("no host-visible, coherent memory type"))?;
        // (memory type, whether the host may map it)
        let mut chosen = vec![(host, true)];
        if let Some(local) = find(
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
            vk::MemoryPropertyFlags::HOST_VISIBLE,
        ) {
            chosen.push((local, false));
        } else if emulate_device_only {
            let mut local = host;
            local.1.property_flags = vk::MemoryPropertyFlags::DEVICE_LOCAL;
            chosen.push((local, false));
        }
        // A discrete GPU's own memory that the host can map too (through its BAR), where it
        // has some and it is not heap 0's type: for what the host writes and the device reads
        // next, so that neither a staging copy nor the device's loads cross the bus. The last
        // heap; its budget is at most `BAR_BUDGET`, as it often shares the GPU's memory with
        // the device-only heap.
        let mut bar_at = None;
        if !unified {
            if let Some(bar) = find(
                coherent | vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::empty(),
            )
            .filter(|bar| bar.0 != host.0)
            {
                bar_at = Some(chosen.len());
                chosen.push((bar, true));
            }
        }
        let alignment = ctx.limits.min_storage_buffer_offset_alignment.max(16);
        let mut pools = Vec::new();
        for (i, ((type_index, t), mappable)) in chosen.into_iter().enumerate() {
            let vk_heap = props.memory_heaps[t.heap_index as usize];
            let mut size = if budget == 0 {
                vk_heap.size
            } else {
                budget.min(vk_heap.size)
            };
            if bar_at == Some(i) {
                size = size.min(BAR_BUDGET);
            }
            let max = max_allocation_size
                .min(ctx.limits.max_memory_allocation_size)
                .min(size);
            let heap = MemoryHeap::new(
                hal_types(t.property_flags),
                BufferUsage::all(),
                max,
                alignment,
                size,
            )?;
            pools.push(Pool {
                heap,
                type_index,
                host_visible: mappable
                    && t.property_flags
                        .contains(vk::MemoryPropertyFlags::HOST_VISIBLE),
                blocks: Vec::new(),
                block_bytes: 0,
                block_size: block_size.min(size).max(alignment),
                in_use: 0,
                peak: 0,
                count: 0,
            });
        }
        let heaps = pools.iter().map(|p| p.heap).collect();
        Ok(Self {
            pools,
            heaps,
            destroyed_blocks: 0,
        })
    }

    /// The heaps that can hold a buffer with `params`, best first: device-only memory first
    /// for requests that do not need the host to see it.
    pub(crate) fn candidates(
        &self,
        params: &hal_core::memory::BufferParams,
    ) -> Result<(usize, u64), Error> {
        let wants_host = params.memory_type.contains(MemoryType::HOST_VISIBLE)
            || params.usage.requires_mapping();
        let mut order: Vec<usize> = (0..self.pools.len()).collect();
        if !wants_host {
            order.sort_by_key(|&i| self.pools[i].host_visible);
        }
        let mut first_error = None;
        for i in order {
            match self.pools[i].heap.check(params) {
                Ok(alignment) => return Ok((i, alignment)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.map_or(Error::InvalidArgument("no heap"), Error::Params))
    }

    /// Allocates `size` bytes aligned to `alignment` in heap `heap`.
    pub(crate) fn allocate(
        &mut self,
        ctx: &Context,
        heap: usize,
        size: u64,
        alignment: u64,
    ) -> Result<Placement, Error> {
        let pool = self
            .pools
            .get_mut(heap)
            .ok_or(Error::InvalidArgument("no such heap"))?;
        if size == 0 {
            return Err(Error::Alloc(AllocError::ZeroSize));
        }
        let too_large = || {
            Error::Alloc(AllocError::OutOfMemory {
                size,
                alignment,
                largest_free_range: 0,
            })
        };
        let dedicated = size > pool.block_size / 2;
        if !dedicated {
            for (index, block) in pool.blocks.iter_mut().enumerate() {
                let Some(block) = block else { continue };
                let Some(alloc) = block.alloc.as_mut() else {
                    continue;
                };
                if let Ok(range) = alloc.allocate(size, alignment) {
                    block.live += 1;
                    pool.note_allocated(size);
                    return Ok(Placement {
                        heap: heap as u8,
                        block: index as u32,
                        range,
                    });
                }
            }
        }
        let block_size = if dedicated {
            size.next_multiple_of(alignment.max(256))
        } else {
            pool.block_size
        };
        if pool.block_bytes.saturating_add(block_size) > pool.heap.size {
            // The retained empty block may be what stands in the way.
            self.destroyed_blocks += pool.release_spare(ctx);
        }
        if pool.block_bytes.saturating_add(block_size) > pool.heap.size {
            return Err(too_large());
        }
        let mut block = Block::new(
            ctx,
            block_size,
            pool.type_index,
            pool.host_visible,
            !dedicated,
        )?;
        let range = match block.alloc.as_mut() {
            Some(a) => match a.allocate(size, alignment) {
                Ok(r) => r,
                Err(e) => {
                    block.destroy(ctx);
                    return Err(e.into());
                }
            },
            None => Range::new(0, size, 0),
        };
        block.live = 1;
        pool.block_bytes += block_size;
        let index = match pool.blocks.iter().position(Option::is_none) {
            Some(i) => {
                pool.blocks[i] = Some(block);
                i
            }
            None => {
                pool.blocks.push(Some(block));
                pool.blocks.len() - 1
            }
        };
        pool.note_allocated(size);
        Ok(Placement {
            heap: heap as u8,
            block: index as u32,
            range,
        })
    }

    /// Gives an allocation back. An emptied dedicated block is freed; one emptied
    /// sub-allocated block per heap is kept as a spare (so a buffer allocated and freed in a
    /// loop, like a queue-ordered allocation, does not make and free a `VkDeviceMemory` each
    /// time); a second one is freed, and the spare goes when the heap's budget needs it.
    pub(crate) fn free(&mut self, ctx: &Context, placement: Placement) {
        let Some(pool) = self.pools.get_mut(placement.heap as usize) else {
            return;
        };
        let Some(Some(block)) = pool.blocks.get_mut(placement.block as usize) else {
            return;
        };
        if let Some(alloc) = block.alloc.as_mut() {
            if alloc.free(placement.range).is_err() {
                return;
            }
        }
        block.live = block.live.saturating_sub(1);
        pool.in_use = pool.in_use.saturating_sub(placement.range.size);
        pool.count = pool.count.saturating_sub(1);
        if block.live == 0 {
            let suballocated = block.alloc.is_some();
            let index = placement.block as usize;
            let other_spare = pool
                .blocks
                .iter()
                .enumerate()
                .any(|(i, b)| i != index && b.as_ref().is_some_and(Block::is_spare));
            if !suballocated || other_spare {
                if let Some(block) = pool.blocks[index].take() {
                    pool.block_bytes -= block.size;
                    block.destroy(ctx);
                    self.destroyed_blocks += 1;
                }
            }
        }
    }

    /// The block an allocation lives in.
    pub(crate) fn block(&self, placement: Placement) -> Result<&Block, Error> {
        self.pools
            .get(placement.heap as usize)
            .and_then(|p| p.blocks.get(placement.block as usize))
            .and_then(Option::as_ref)
            .ok_or(Error::Internal("allocation of a freed block"))
    }

    /// Statistics of heap `heap`.
    pub(crate) fn stats(&self, heap: usize) -> Result<AllocStats, Error> {
        let pool = self
            .pools
            .get(heap)
            .ok_or(Error::InvalidArgument("no such heap"))?;
        let in_blocks = pool
            .blocks
            .iter()
            .flatten()
            .filter_map(|b| b.alloc.as_ref().map(|a| a.stats().largest_free_range))
            .max()
            .unwrap_or(0);
        // A kept spare block is free for the taking.
        let spare: u64 = pool
            .blocks
            .iter()
            .flatten()
            .filter(|b| b.is_spare())
            .map(|b| b.size)
            .sum();
        Ok(AllocStats {
            capacity: pool.heap.size,
            bytes_in_use: pool.in_use,
            peak_bytes_in_use: pool.peak,
            allocation_count: pool.count,
            largest_free_range: in_blocks.max(pool.heap.size - pool.block_bytes + spare),
        })
    }

    /// Frees the empty blocks kept as spares, in every heap.
    pub(crate) fn trim(&mut self, ctx: &Context) {
        for pool in &mut self.pools {
            self.destroyed_blocks += pool.release_spare(ctx);
        }
    }

    /// Frees every block (teardown).
    pub(crate) fn destroy(&mut self, ctx: &Context) {
        for pool in &mut self.pools {
            for block in pool.blocks.drain(..).flatten() {
                block.destroy(ctx);
            }
            pool.block_bytes = 0;
        }
    }
}

impl Pool {
    /// Frees the empty blocks kept as spares; returns how many.
    fn release_spare(&mut self, ctx: &Context) -> u64 {
        let mut destroyed = 0;
        for slot in self.blocks.iter_mut() {
            if slot.as_ref().is_some_and(Block::is_spare) {
                if let Some(block) = slot.take() {
                    self.block_bytes -= block.size;
                    block.destroy(ctx);
                    destroyed += 1;
                }
            }
        }
        destroyed
    }

    fn note_allocated(&mut self, size: u64) {
        self.in_use += size;
        self.count += 1;
        self.peak = self.peak.max(self.in_use);
    }
}
