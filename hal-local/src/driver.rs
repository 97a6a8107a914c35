//! `hal_core::Device` for the local device: argument checks, then the parts in `device`,
//! `queue` and `replay`.

use crate::alloc::DeviceAllocator;
use crate::device::{LocalDevice, LocalHostMemory, LocalMapping, MappingRec};
use crate::queue::Action;
use hal_core::buffer::BufferInfo;
use hal_core::command::{BufferLookup, CommandBufferMode, CommandList, Record, MAX_BINDING_SLOTS};
use hal_core::device::{HostSource, ObjectCounts, PersistentMapping, ReadStats};
use hal_core::memory::alloc::AllocStats;
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::semaphore::Timeline;
use hal_core::{
    Buffer, BufferRef, BufferSpan, CommandBuffer, Device, DeviceId, Error, Executable,
    ExecutableSource, MemoryDomain, Semaphore, SemaphoreValue, ShortName, Submit, Timeout,
};

struct Buffers<'a, const OBJECTS: usize>(
    &'a hal_core::handle::Table<hal_core::buffer::BufferKind, crate::device::BufferRec, OBJECTS>,
);

impl<const OBJECTS: usize> BufferLookup for Buffers<'_, OBJECTS> {
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error> {
        Ok(self.0.get(buffer)?.info)
    }
}

impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > LocalDevice<'_, OBJECTS, SLOTS, NODES, PENDING, A>
{
    fn check_mapping(
        &self,
        span: BufferSpan,
        access: MemoryAccess,
        usage: BufferUsage,
    ) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        if !info.memory_type.is_mappable() {
            return Err(Error::NotMappable);
        }
        if !info.usage.intersects(usage) {
            return Err(Error::Usage {
                what: "map",
                needed: usage.bits(),
                allowed: info.usage.bits(),
            });
        }
        info.require_access(access)
    }

    /// Checks a host read or write of `span` moving `len` bytes with `access`.
    fn check_host_transfer(
        &self,
        span: BufferSpan,
        access: MemoryAccess,
        len: usize,
    ) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        info.require_access(access)?;
        let what = if access.contains(MemoryAccess::WRITE) {
            "write"
        } else {
            "read"
        };
        if info.resolve(what, span.offset, span.length)? != len as u64 {
            return Err(Error::InvalidArgument(
                "host transfer length differs from the span's",
            ));
        }
        Ok(())
    }

    pub(crate) fn release_command_buffer_now(&mut self, cb: CommandBuffer) -> Result<(), Error> {
        let rec = self.command_buffers.remove(cb)?;
        self.slot_alloc.free(rec.slots)?;
        Ok(())
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
            .ok_or(Error::Driver {
                what: "command slots outside the pool",
                code: start as i64,
            })?;
        cb.list.record(slots, &Buffers(&self.buffers), record)
    }

    /// Records `records` into a one-shot command buffer and submits it, releasing it when
    /// it has run.
    fn submit_one_shot(
        &mut self,
        submit: Submit<'_>,
        capacity: u32,
        record: Record<'_>,
    ) -> Result<(), Error> {
        // `submit_execute` checks the submission; a refusal there releases the buffer below.
        let cb = self.create_command_buffer(CommandBufferMode::OneShot, capacity, 0)?;
        self.register_replay(&record);
        let recorded = self.record_commands(cb, record).and_then(|()| self.end(cb));
        if let Err(e) = recorded {
            let _ = self.release_command_buffer_now(cb);
            return Err(e);
        }
        let submitted = self.submit_execute(submit, cb, &[], true);
        if submitted.is_err() {
            // Refused before it was queued; if it ran and failed it is gone already (the
            // generation check makes this a no-op then).
            let _ = self.release_command_buffer_now(cb);
        }
        submitted
    }

    fn submit_execute(
        &mut self,
        submit: Submit<'_>,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
        release_after: bool,
    ) -> Result<(), Error> {
        if table.len() > MAX_BINDING_SLOTS as usize {
            return Err(Error::Limit {
                what: "binding table entries",
                requested: table.len() as u64,
                limit: MAX_BINDING_SLOTS.into(),
            });
        }
        self.check_submit(&submit)?;
        for entry in table {
            let info = self.buffers.get(entry.buffer)?.info;
            info.resolve("binding table entry", entry.offset, entry.length)?;
        }
        self.ensure_pending_room(&submit)?;
        self.command_buffers
            .get_mut(command_buffer)?
            .list
            .begin_submit(table.len())?;
        self.submit_checked(
            submit,
            Action::Execute {
                command_buffer,
                release_after,
            },
            table,
        )
    }
}

impl<
        'm,
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > Device for LocalDevice<'m, OBJECTS, SLOTS, NODES, PENDING, A>
{
    type HostMemory = LocalHostMemory<'m>;
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
        memory: LocalHostMemory<'m>,
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
        self.mappings.insert(MappingRec { span, access })
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
        self.check_host_transfer(span, MemoryAccess::READ, out.len())?;
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
        self.check_host_transfer(span, MemoryAccess::WRITE, data.len())?;
        self.write_span(span, data)
    }

    fn load_executable(&mut self, source: ExecutableSource<'_>) -> Result<Executable, Error> {
        match source {
            ExecutableSource::Kernel(name) => {
                let kernel = crate::kernels::find(self.kernels.unwrap_or_default(), name).ok_or(
                    Error::UnknownKernel {
                        name: ShortName::new(name),
                    },
                )?;
                self.executables.insert(crate::device::ExecutableRec {
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
        let unit = crate::device::SLOT_UNIT;
        let slots = self
            .slot_alloc
            .allocate(u64::from(capacity) * unit, unit)
            .map_err(|_| Error::Limit {
                what: "command slots free in the device's pool",
                requested: capacity.into(),
                limit: self.slot_alloc.stats().largest_free_range / unit,
            })?;
        let rec = crate::device::CommandBufferRec {
            first_slot: (slots.offset / unit) as usize,
            slot_count: capacity as usize,
            list,
            slots,
            pending_uses: 0,
            release_when_idle: false,
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

    fn end(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        self.command_buffers.get_mut(command_buffer)?.list.end()
    }

    fn release_command_buffer(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        let cb = self.command_buffers.get_mut(command_buffer)?;
        if cb.pending_uses > 0 {
            cb.release_when_idle = true;
            return Ok(());
        }
        self.release_command_buffer_now(command_buffer)
    }

    fn create_semaphore(&mut self, initial: u64) -> Result<Semaphore, Error> {
        self.semaphores.insert(Timeline::new(initial))
    }

    fn release_semaphore(&mut self, semaphore: Semaphore) -> Result<(), Error> {
        self.semaphores.remove(semaphore)?;
        // Work parked on it can never run now: it fails.
        self.drain();
        Ok(())
    }

    fn query_semaphore(&self, semaphore: Semaphore) -> Result<u64, Error> {
        self.semaphores.get(semaphore)?.query()
    }

    fn signal_semaphore(&mut self, semaphore: Semaphore, value: u64) -> Result<(), Error> {
        self.semaphores.get_mut(semaphore)?.signal(value)?;
        self.drain();
        Ok(())
    }

    fn fail_semaphore(&mut self, semaphore: Semaphore, code: u32) -> Result<(), Error> {
        self.semaphores.get_mut(semaphore)?.fail(code);
        self.drain();
        Ok(())
    }

    fn wait_semaphores(&mut self, waits: &[SemaphoreValue], timeout: Timeout) -> Result<(), Error> {
        self.wait_all(waits, timeout)
    }

    fn queue_alloca(
        &mut self,
        submit: Submit<'_>,
        params: BufferParams,
        size: u64,
    ) -> Result<Buffer, Error> {
        self.check_submit(&submit)?;
        let buffer = self.allocate(params, size, true)?;
        match self.submit_checked(submit, Action::Signal, &[]) {
            Ok(()) => Ok(buffer),
            Err(e) => {
                let _ = self.release(buffer);
                Err(e)
            }
        }
    }

    fn queue_dealloca(&mut self, submit: Submit<'_>, buffer: Buffer) -> Result<(), Error> {
        self.buffers.get(buffer)?;
        self.submit_action(submit, Action::Dealloca(buffer))
    }

    fn queue_fill(
        &mut self,
        submit: Submit<'_>,
        target: BufferSpan,
        pattern: &[u8],
    ) -> Result<(), Error> {
        let target = BufferRef::span(target);
        self.submit_one_shot(submit, 1, Record::Fill { target, pattern })
    }

    fn queue_update(
        &mut self,
        submit: Submit<'_>,
        data: &[u8],
        target: BufferSpan,
    ) -> Result<(), Error> {
        if data.len() > hal_core::command::MAX_UPDATE_BYTES {
            return Err(Error::Limit {
                what: "update bytes",
                requested: data.len() as u64,
                limit: hal_core::command::MAX_UPDATE_BYTES as u64,
            });
        }
        let slots = 1 + data.len().div_ceil(hal_core::command::DATA_SLOT_BYTES);
        let target = BufferRef::span(target);
        self.submit_one_shot(submit, slots as u32, Record::Update { target, data })
    }

    fn queue_copy(
        &mut self,
        submit: Submit<'_>,
        source: BufferSpan,
        target: BufferSpan,
        length: u64,
    ) -> Result<(), Error> {
        let record = Record::Copy {
            source: BufferRef::span(source),
            target: BufferRef::span(target),
            length,
        };
        self.submit_one_shot(submit, 1, record)
    }

    fn queue_execute(
        &mut self,
        submit: Submit<'_>,
        command_buffer: CommandBuffer,
        bindings: &[BufferSpan],
    ) -> Result<(), Error> {
        self.submit_execute(submit, command_buffer, bindings, false)
    }

    fn queue_read<S: HostSource>(
        &mut self,
        submit: Submit<'_>,
        source: &mut S,
        target: BufferSpan,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error> {
        if chunk_bytes == 0 {
            return Err(Error::InvalidArgument("streaming chunk size of zero"));
        }
        let info = self.buffers.get(target.buffer)?.info;
        info.require_access(MemoryAccess::WRITE)?;
        info.require_usage("streaming read", BufferUsage::TRANSFER_TARGET)?;
        let length = info.resolve("streaming read", target.offset, target.length)?;
        if source.len() < length {
            return Err(Error::OutOfRange {
                what: "streaming read source",
                offset: 0,
                length,
                size: source.len(),
            });
        }
        self.require_reached(&submit)?;
        let mut stats = ReadStats::default();
        let mut result = Ok(());
        while stats.bytes < length {
            let n = chunk_bytes.min(length - stats.bytes);
            let chunk = BufferSpan::new(target.buffer, target.offset + stats.bytes, n);
            let base = stats.bytes;
            result = self.for_each_piece(chunk, "streaming read", &mut |raw, at| {
                // SAFETY: `queue_read` holds `&mut self`; the source is caller memory the
                // device does not own, so this is the only view of these bytes.
                let bytes = unsafe { raw.bytes_mut() }.ok_or_else(crate::device::read_only)?;
                source.read_at(base + at, bytes)
            });
            if result.is_err() {
                break;
            }
            stats.bytes += n;
            stats.chunks += 1;
        }
        self.complete(submit.signals, result);
        self.drain();
        result.map(|()| stats)
    }
}
