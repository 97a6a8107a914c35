//! `hal_core::Device` for the Vulkan device: argument checks, then the parts in `buffer`,
//! `transfer`, `import`, `executable` and `command`; the queue and semaphores are hal-core's,
//! over [`QueueDriver`].

use crate::transfer::VulkanMapping;
use crate::types::{CommandBufferRec, VulkanDevice, MAX_COMMAND_SLOTS, MAX_OBJECTS, MAX_PENDING};
use hal_core::buffer::BufferInfo;
use hal_core::command::{Command, CommandBufferMode, CommandList, Record};
use hal_core::device::{HostSource, MappingRecord, ObjectCounts, PersistentMapping, ReadStats};
use hal_core::memory::alloc::AllocStats;
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::queue::{Queue, QueueDriver, QueueState};
use hal_core::semaphore::Timeline;
use hal_core::HostMemory;
use hal_core::{
    Buffer, BufferSpan, CommandBuffer, Device, DeviceId, Error, Executable, ExecutableSource,
    MemoryDomain, Semaphore, SemaphoreValue, Timeout,
};

impl QueueDriver for VulkanDevice<'_> {
    type Queue = Queue<MAX_OBJECTS, MAX_PENDING>;

    fn queue(&self) -> &Self::Queue {
        &self.queue
    }

    fn queue_mut(&mut self) -> &mut Self::Queue {
        &mut self.queue
    }

    fn command_list(&mut self, command_buffer: CommandBuffer) -> Result<&mut CommandList, Error> {
        Ok(&mut self.command_buffers.get_mut(command_buffer)?.list)
    }

    fn run_command_buffer(
        &mut self,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        self.execute(command_buffer, table)
    }

    fn free_command_buffer(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        let rec = self.command_buffers.remove(command_buffer)?;
        self.free_command_buffer_rec(rec);
        Ok(())
    }

    fn allocate_queue_ordered(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        self.allocate(params, size)
    }

    fn signalled(&mut self, signals: &[SemaphoreValue]) {
        self.note_device_signals(signals);
    }
}

impl<'m> Device for VulkanDevice<'m> {
    type HostMemory = HostMemory<'m>;
    type Mapping<'a>
        = VulkanMapping<'a>
    where
        Self: 'a;

    fn id(&self) -> DeviceId {
        self.id
    }

    fn heaps(&self) -> &[MemoryHeap] {
        &self.memory.heaps
    }

    fn memory_domain(&self, memory_type: MemoryType) -> MemoryDomain {
        self.domain(memory_type)
    }

    fn allocator_stats(&self, heap: usize) -> Result<AllocStats, Error> {
        self.memory.stats(heap)
    }

    fn object_counts(&self) -> ObjectCounts {
        self.counts()
    }

    fn allocate_buffer(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        self.allocate(params, size)
    }

    fn import_buffer(
        &mut self,
        memory: HostMemory<'m>,
        params: BufferParams,
    ) -> Result<Buffer, Error> {
        self.import(memory, params)
    }

    fn release_buffer(&mut self, buffer: Buffer) -> Result<(), Error> {
        self.release(buffer)
    }

    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error> {
        Ok(self.buffers.get(buffer)?.info)
    }

    fn map(&mut self, span: BufferSpan, access: MemoryAccess) -> Result<VulkanMapping<'_>, Error> {
        self.settle()?;
        let (piece, _) = self.map_piece(span, access, BufferUsage::MAPPING)?;
        // SAFETY: the piece is mapped memory of a live buffer; the mapping borrows `self`
        // mutably for its whole life and no device work is in flight.
        Ok(unsafe { VulkanMapping::new(piece.host, piece.len as usize, access) })
    }

    fn map_persistent(
        &mut self,
        span: BufferSpan,
        access: MemoryAccess,
    ) -> Result<PersistentMapping, Error> {
        self.settle()?;
        let (_, span) = self.map_piece(span, access, BufferUsage::MAPPING_PERSISTENT)?;
        self.mappings.insert(MappingRecord { span, access })
    }

    fn mapped(&mut self, mapping: PersistentMapping) -> Result<VulkanMapping<'_>, Error> {
        self.settle()?;
        let rec = *self.mappings.get(mapping)?;
        let (piece, _) = self.single_piece(rec.span, "map")?;
        // SAFETY: as in `map`.
        Ok(unsafe { VulkanMapping::new(piece.host, piece.len as usize, rec.access) })
    }

    fn unmap(&mut self, mapping: PersistentMapping) -> Result<(), Error> {
        self.mappings.remove(mapping).map(|_| ())
    }

    fn read_buffer(&mut self, span: BufferSpan, out: &mut [u8]) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        info.check_host_transfer(span.offset, span.length, MemoryAccess::READ, out.len())?;
        self.settle()?;
        self.read_span(span, out)
    }

    fn write_buffer(&mut self, span: BufferSpan, data: &[u8]) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        info.check_host_transfer(span.offset, span.length, MemoryAccess::WRITE, data.len())?;
        self.settle()?;
        self.write_span(span, data)
    }

    fn create_semaphore(&mut self, initial: u64) -> Result<Semaphore, Error> {
        let semaphore = self.queue.insert_timeline(Timeline::new(initial))?;
        self.note_created(semaphore, initial);
        Ok(semaphore)
    }

    fn query_semaphore(&self, semaphore: Semaphore) -> Result<u64, Error> {
        let queued = self.queue.timeline(semaphore)?.query()?;
        Ok(self.device_value(semaphore, queued))
    }

    fn wait_semaphores(&mut self, waits: &[SemaphoreValue], timeout: Timeout) -> Result<(), Error> {
        self.drain_unblocked();
        self.queue.check_reached(waits, timeout)?;
        self.wait_device(waits, timeout)
    }

    fn load_executable(&mut self, source: ExecutableSource<'_>) -> Result<Executable, Error> {
        self.load(source)
    }

    fn release_executable(&mut self, executable: Executable) -> Result<(), Error> {
        self.unload(executable)
    }

    fn create_command_buffer(
        &mut self,
        mode: CommandBufferMode,
        capacity: u32,
        binding_capacity: u16,
    ) -> Result<CommandBuffer, Error> {
        if capacity == 0 {
            return Err(Error::InvalidArgument("command buffer capacity of zero"));
        }
        let list = CommandList::new(mode, binding_capacity)?;
        let free = MAX_COMMAND_SLOTS - self.slots_in_use;
        if capacity as usize > free {
            return Err(Error::Limit {
                what: "command slots free in the device's pool",
                requested: capacity.into(),
                limit: free as u64,
            });
        }
        if self.command_buffers.len() >= self.command_buffers.capacity() {
            return Err(Error::TableFull {
                table: "command buffer",
                capacity: self.command_buffers.capacity() as u32,
            });
        }
        let rec = CommandBufferRec {
            list,
            slots: vec![Command::EMPTY; capacity as usize],
            upload: None,
            memo: None,
            submitted: 0,
        };
        self.slots_in_use += capacity as usize;
        self.command_buffers.insert(rec).inspect_err(|_| {
            self.slots_in_use -= capacity as usize;
        })
    }

    fn record(&mut self, command_buffer: CommandBuffer, record: Record<'_>) -> Result<(), Error> {
        if let Record::Dispatch { executable, .. } = record {
            self.executables.get(executable)?;
        }
        let cb = self.command_buffers.get_mut(command_buffer)?;
        cb.list.record(&mut cb.slots, &*self.buffers, record)
    }

    fn stream_chunks<S: HostSource>(
        &mut self,
        source: &mut S,
        target: BufferSpan,
        length: u64,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error> {
        self.settle()?;
        self.stream(source, target, length, chunk_bytes)
    }
}
