//! The Vulkan device's set-up, queries and teardown (its type, and the records its tables
//! hold, are in `types`).

use crate::config::VulkanConfig;
use crate::instance::Context;
use crate::memory::Memory;
use crate::objects::VkObjectCounts;
use crate::profile::{DispatchTime, Profiler};
use crate::staging::InternalBuffer;
use crate::types::{DeviceSignal, Pipelines, VulkanDevice, MAX_OBJECTS};
use hal_core::device::ObjectCounts;
use hal_core::handle::Table;
use hal_core::memory::MemoryType;
use hal_core::{DeviceId, Error, MemoryDomain};
use std::marker::PhantomData;

impl<'m> VulkanDevice<'m> {
    /// Creates a device as `config` says.
    pub fn new(config: VulkanConfig) -> Result<Self, Error> {
        let ctx = Context::new(&config)?;
        let memory = Memory::new(
            &ctx,
            config.max_allocation_size,
            config.heap_budget,
            config.block_size,
            config.emulate_device_only_heap,
        )?;
        let sparse = memory
            .pools
            .iter()
            .map(|p| crate::sparse::probe(&ctx, p.type_index, p.heap.max_allocation_size))
            .collect();
        let pipelines = Pipelines::new(&ctx)?;
        let dummy = match InternalBuffer::new(&ctx, 256, memory.pools[0].type_index) {
            Ok(d) => d,
            Err(e) => {
                let mut pipelines = pipelines;
                pipelines.destroy(&ctx);
                return Err(e);
            }
        };
        let profiler = match Profiler::new(&ctx) {
            Ok(p) => p,
            Err(e) => {
                let mut pipelines = pipelines;
                pipelines.destroy(&ctx);
                dummy.destroy(&ctx);
                return Err(e);
            }
        };
        Ok(Self {
            id: DeviceId::next(),
            config,
            ctx,
            memory,
            sparse,
            pipelines,
            buffers: Box::new(Table::new()),
            mappings: Box::new(Table::new()),
            executables: Box::new(Table::new()),
            command_buffers: Box::new(Table::new()),
            slots_in_use: 0,
            queue: Box::default(),
            memo_generation: 0,
            object_generation: 0,
            memo_hits: 0,
            staging: None,
            dummy: Some(dummy),
            retired: Vec::new(),
            signals: Box::new([DeviceSignal::default(); MAX_OBJECTS]),
            staged_transfers: 0,
            profiler,
            _memory: PhantomData,
        })
    }

    /// What each dispatch of the last command buffer submitted cost on the GPU, once the
    /// device is idle (this waits for it). Empty unless [`profiling`](Self::profiling).
    pub fn dispatch_times(&mut self) -> Result<Vec<DispatchTime>, Error> {
        match &self.profiler {
            Some(p) => {
                self.ctx.wait_idle();
                p.read(&self.ctx)
            }
            None => Ok(Vec::new()),
        }
    }

    /// Whether dispatches are timed: profiling is on and the compute queue writes
    /// timestamps.
    pub fn profiling(&self) -> bool {
        self.profiler.is_some()
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &VulkanConfig {
        &self.config
    }

    /// The physical device's name.
    pub fn device_name(&self) -> &str {
        &self.ctx.device_name
    }

    /// Whether chunked buffers on heap `heap` are sparse (one `VkBuffer`) rather than one
    /// allocation per chunk.
    pub fn sparse_chunks(&self, heap: usize) -> bool {
        self.sparse.get(heap).is_some_and(Option::is_some)
    }

    /// The queue families used: (compute, transfer, whether a sparse-binding queue exists).
    pub fn queue_families(&self) -> (u32, u32, bool) {
        (
            self.ctx.queue_family,
            self.ctx.transfer_family,
            self.ctx.sparse_queue.is_some(),
        )
    }

    /// Whether dispatches bind their buffers with push descriptors (otherwise with descriptor
    /// sets from each recording's pool).
    pub fn push_descriptors(&self) -> bool {
        self.ctx.push_descriptor.is_some()
    }

    /// Whether host memory can be imported in place.
    pub fn host_import(&self) -> bool {
        self.ctx.host_memory.is_some()
    }

    /// Live Vulkan objects (buffers, memory, pipelines, …) made by this device.
    pub fn vulkan_objects(&self) -> VkObjectCounts {
        self.ctx.live.snapshot()
    }

    /// Warnings and errors the validation layer reported so far (0 without validation).
    pub fn validation_messages(&self) -> u32 {
        self.ctx.messages.count()
    }

    /// Host reads and writes that went through the staging buffer because the memory was not
    /// host-visible (a unified device has none).
    pub fn staged_transfers(&self) -> u64 {
        self.staged_transfers
    }

    /// Times the host blocked waiting for the GPU so far.
    pub fn host_waits(&self) -> u64 {
        self.ctx
            .host_waits
            .load(core::sync::atomic::Ordering::Relaxed)
    }

    /// Submissions to the GPU so far.
    pub fn submissions(&self) -> u64 {
        self.ctx.next_value
    }

    /// Executions of reusable command buffers replayed from a kept recording.
    pub fn memoized_replays(&self) -> u64 {
        self.memo_hits
    }

    /// Gives back device memory kept for reuse (each heap keeps one emptied block so that
    /// buffers allocated and freed in a loop do not allocate device memory each time).
    pub fn trim(&mut self) {
        // Best effort: blocks pending work may still use stay until a later trim.
        if self.settle().is_ok() {
            self.memory.trim(&self.ctx);
        }
    }

    /// Nanoseconds the host has spent blocked waiting for the GPU so far: a call's wall time
    /// minus the growth of this is its host-side cost.
    pub fn gpu_wait_nanos(&self) -> u64 {
        self.ctx
            .waited_nanos
            .load(core::sync::atomic::Ordering::Relaxed)
    }

    /// Where memory of `memory_type` lives: host memory the device reaches (`Host`), or
    /// memory behind the GPU.
    pub(crate) fn domain(&self, memory_type: MemoryType) -> MemoryDomain {
        let unified = matches!(
            self.ctx.device_type,
            ash::vk::PhysicalDeviceType::CPU | ash::vk::PhysicalDeviceType::INTEGRATED_GPU
        );
        let host_memory = memory_type.contains(MemoryType::HOST_VISIBLE)
            && (unified || !memory_type.contains(MemoryType::DEVICE_LOCAL));
        if host_memory {
            MemoryDomain::Host
        } else {
            MemoryDomain::Device { fabric: 1 }
        }
    }

    /// Counts every destruction of a Vulkan object a recording may name (a buffer, a block
    /// of memory, a pipeline): a plan that comes out the same as a kept recording's names the
    /// same live objects only if this has not moved since.
    pub(crate) fn objects_destroyed(&self) -> u64 {
        self.object_generation + self.memory.destroyed_blocks
    }

    pub(crate) fn counts(&self) -> ObjectCounts {
        ObjectCounts::of(
            self.buffers.len(),
            self.command_buffers.len(),
            self.executables.len(),
            &*self.queue,
        )
    }

    /// Destroys every Vulkan object the device made but the context itself.
    fn teardown(&mut self) {
        self.free_all_retired();
        let buffers: Vec<_> = self.buffers.iter().map(|(h, _)| h).collect();
        for b in buffers {
            if let Ok(rec) = self.buffers.remove(b) {
                self.free_backing(rec);
            }
        }
        let cbs: Vec<_> = self.command_buffers.iter().map(|(h, _)| h).collect();
        for cb in cbs {
            if let Ok(rec) = self.command_buffers.remove(cb) {
                self.free_command_buffer_rec(rec);
            }
        }
        self.memory.destroy(&self.ctx);
        self.pipelines.destroy(&self.ctx);
        if let Some(s) = self.staging.take() {
            s.destroy(&self.ctx);
        }
        if let Some(d) = self.dummy.take() {
            d.destroy(&self.ctx);
        }
        if let Some(p) = self.profiler.take() {
            p.destroy(&self.ctx);
        }
    }
}

impl Drop for VulkanDevice<'_> {
    fn drop(&mut self) {
        self.teardown();
        // Only the context's own objects (command pool, progress timeline) are left.
        let live = self.ctx.live.snapshot();
        let messages = self.ctx.messages.count();
        if self.config.strict_teardown && !std::thread::panicking() {
            let own = 2;
            assert!(
                live.total() == own,
                "Vulkan objects leaked by the device: {live:?}"
            );
            assert_eq!(
                messages, 0,
                "the validation layer reported {messages} warning(s) or error(s) (printed above)"
            );
        }
    }
}
