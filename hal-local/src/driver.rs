//! `hal_core::Device` for the local device: argument checks, then the parts in `device` and
//! `replay`; the queue and semaphores are hal-core's, over [`QueueDriver`].

use crate::alloc::DeviceAllocator;
use crate::mapping::LocalMapping;
use crate::types::{CommandBufferRec, ExecutableRec, LocalDevice, SLOT_UNIT};
use hal_core::buffer::BufferInfo;
use hal_core::command::{CommandBufferMode, CommandList, Record};
use hal_core::device::{HostSource, MappingRecord, ObjectCounts, PersistentMapping, ReadStats};
use hal_core::memory::alloc::AllocStats;
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::queue::{QueueDriver, QueueState, QueueView};
use hal_core::HostMemory;
use hal_core::{
    Buffer, BufferSpan, CommandBuffer, Device, DeviceId, Error, Executable, ExecutableSource,
    MemoryDomain, ShortName,
};

impl<A: DeviceAllocator> LocalDevice<'_, A> {
    fn check_mapping(
        &self,
        span: BufferSpan,
        access: MemoryAccess,
        usage: BufferUsage,
    ) -> Result<(), Error> {
        self.buffers
            .get(span.buffer)?
            .info
            .check_mapping(access, usage)
    }

    /// Records `record` into `command_buffer`'s slots (its replay registered already: see
    /// [`register_replay`](Self::register_replay)).
    fn record_commands(
        &mut self,
        command_buffer: CommandBuffer,
        record: Record<'_>,
    ) -> Result<(), Error> {
        if let Record::Dispatch { executable, .. } = record {
            self.executables.get(executable)?;
        }
        let cb = self.command_buffers.get_mut(command_buffer)?;
        let start = cb.first_slot;
        let slots = self
            .slots
            .get_mut(start..start + cb.slot_count)
            .ok_or(Error::Internal("command slots outside the pool"))?;
        cb.list.record(slots, &*self.buffers, record)
    }
}

impl<'m, A: DeviceAllocator> QueueDriver for LocalDevice<'m, A> {
    type Queue = QueueView<'m>;

    #[inline]
    fn drain_unblocked(&mut self) {
        if self.queue.parked_count() != 0 {
            if let Some(parking) = &self.parking {
                (parking.drain)(self)
            }
        }
    }

    #[inline]
    fn queue(&self) -> &Self::Queue {
        &self.queue
    }

    #[inline]
    fn queue_mut(&mut self) -> &mut Self::Queue {
        &mut self.queue
    }

    #[inline]
    fn command_list(&mut self, command_buffer: CommandBuffer) -> Result<&mut CommandList, Error> {
        Ok(&mut self.command_buffers.get_mut(command_buffer)?.list)
    }

    #[inline]
    fn run_command_buffer(
        &mut self,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        self.execute(command_buffer, table)
    }

    fn free_command_buffer(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        let rec = self.command_buffers.remove(command_buffer)?;
        self.slot_alloc.free(rec.slots)?;
        Ok(())
    }

    #[inline]
    fn allocate_queue_ordered(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        self.allocate(params, size, true)
    }
}

impl<'m, A: DeviceAllocator> Device for LocalDevice<'m, A> {
    type HostMemory = HostMemory<'m>;
    type Mapping<'a>
        = LocalMapping<'a>
    where
        Self: 'a;

    fn id(&self) -> DeviceId {
        self.id
    }

    fn heaps(&self) -> &[MemoryHeap] {
        &self.heaps
    }

    fn memory_domain(&self, _memory_type: MemoryType) -> MemoryDomain {
        self.domain
    }

    fn allocator_stats(&self, heap: usize) -> Result<AllocStats, Error> {
        match heap {
            0 => Ok(self.general.stats()),
            _ => Err(Error::InvalidArgument("no such heap")),
        }
    }

    fn object_counts(&self) -> ObjectCounts {
        self.counts()
    }

    fn allocate_buffer(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        self.allocate(params, size, false)
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

    fn map(&mut self, span: BufferSpan, access: MemoryAccess) -> Result<LocalMapping<'_>, Error> {
        self.check_mapping(span, access, BufferUsage::MAPPING)?;
        let (raw, _) = self.raw(span.buffer, "map", span.offset, span.length)?;
        // SAFETY: the mapping borrows `self` mutably for its whole life.
        Ok(unsafe { LocalMapping::new(raw, access) })
    }

    fn map_persistent(
        &mut self,
        span: BufferSpan,
        access: MemoryAccess,
    ) -> Result<PersistentMapping, Error> {
        self.check_mapping(span, access, BufferUsage::MAPPING_PERSISTENT)?;
        let (raw, _) = self.raw(span.buffer, "map", span.offset, span.length)?;
        let span = BufferSpan::new(span.buffer, span.offset, raw.len() as u64);
        self.mappings.insert(MappingRecord { span, access })
    }

    fn mapped(&mut self, mapping: PersistentMapping) -> Result<LocalMapping<'_>, Error> {
        let rec = *self.mappings.get(mapping)?;
        let (raw, _) = self.raw(rec.span.buffer, "map", rec.span.offset, rec.span.length)?;
        // SAFETY: the mapping borrows `self` mutably for its whole life.
        Ok(unsafe { LocalMapping::new(raw, rec.access) })
    }

    fn unmap(&mut self, mapping: PersistentMapping) -> Result<(), Error> {
        self.mappings.remove(mapping).map(|_| ())
    }

    fn read_buffer(&mut self, span: BufferSpan, out: &mut [u8]) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        info.check_host_transfer(span.offset, span.length, MemoryAccess::READ, out.len())?;
        self.for_each_piece(span, "read", &mut |raw, at| {
            let at = at as usize;
            let dst = out
                .get_mut(at..at + raw.len())
                .ok_or(Error::InvalidArgument(
                    "read length differs from the output's",
                ))?;
            // SAFETY: `read_buffer` holds `&mut self`; this view ends with the statement.
            dst.copy_from_slice(unsafe { raw.bytes() });
            Ok(())
        })
    }

    fn write_buffer(&mut self, span: BufferSpan, data: &[u8]) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        info.check_host_transfer(span.offset, span.length, MemoryAccess::WRITE, data.len())?;
        self.write_span(span, data)
    }

    fn load_executable(&mut self, source: ExecutableSource<'_>) -> Result<Executable, Error> {
        match source {
            ExecutableSource::Kernel(name) => {
                let kernel =
                    crate::kernels::find(self.kernels, name).ok_or(Error::UnknownKernel {
                        name: ShortName::new(name),
                    })?;
                self.executables.insert(ExecutableRec {
                    entry: kernel.entry,
                })
            }
            ExecutableSource::Spirv { .. } => Err(Error::Unsupported(
                "the local driver runs linked kernels, not SPIR-V",
            )),
        }
    }

    fn release_executable(&mut self, executable: Executable) -> Result<(), Error> {
        self.executables.remove(executable).map(|_| ())
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
        let unit = SLOT_UNIT;
        let slots = self
            .slot_alloc
            .allocate(u64::from(capacity) * unit, unit)
            .map_err(|_| Error::Limit {
                what: "command slots free in the device's pool",
                requested: capacity.into(),
                limit: self.slot_alloc.stats().largest_free_range / unit,
            })?;
        let rec = CommandBufferRec {
            first_slot: (slots.offset / unit) as usize,
            slot_count: capacity as usize,
            list,
            slots,
        };
        self.command_buffers.insert(rec).inspect_err(|_| {
            let _ = self.slot_alloc.free(slots);
        })
    }

    #[inline]
    fn record(&mut self, command_buffer: CommandBuffer, record: Record<'_>) -> Result<(), Error> {
        self.register_replay(&record);
        self.record_commands(command_buffer, record)
    }

    fn stream_chunks<S: HostSource>(
        &mut self,
        source: &mut S,
        target: BufferSpan,
        length: u64,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error> {
        let mut stats = ReadStats::default();
        while stats.bytes < length {
            let n = chunk_bytes.min(length - stats.bytes);
            let chunk = BufferSpan::new(target.buffer, target.offset + stats.bytes, n);
            let base = stats.bytes;
            self.for_each_piece(chunk, "streaming read", &mut |raw, at| {
                // SAFETY: `stream_chunks` holds `&mut self`; the source is caller memory the
                // device does not own, so this is the only view of these bytes.
                let bytes = unsafe { raw.bytes_mut() }.ok_or_else(crate::mapping::read_only)?;
                source.read_at(base + at, bytes)
            })?;
            stats.bytes += n;
            stats.chunks += 1;
        }
        Ok(stats)
    }
}
