//! The driver interface.
//!
//! [`Device`] is statically dispatched: code generic over `D: Device` is compiled for the
//! driver it runs on, and firmware pays for no vtable. Associated types carry what drivers
//! genuinely differ in — how host memory is handed over for import and what a mapping is.
//! Every object is named by a generation-checked [`Handle`](crate::handle::Handle); a stale
//! handle is an error, never undefined behaviour.
//!
//! Queue operations take a [`Submit`]: they start once every wait is reached and signal every
//! signal when done. If a wait's semaphore failed, or the operation itself fails, every signal
//! semaphore fails with the same status, so failure reaches all work downstream.

use crate::buffer::{Buffer, BufferInfo, BufferSpan};
use crate::command::{
    BufferRef, CommandBuffer, CommandBufferMode, Record, DATA_SLOT_BYTES, MAX_UPDATE_BYTES,
};
use crate::executable::{Executable, ExecutableSource};
use crate::handle::{Handle, Kind};
use crate::memory::alloc::AllocStats;
use crate::memory::{BufferParams, MemoryAccess, MemoryDomain, MemoryHeap, MemoryType};
use crate::queue::{self, Action, QueueDriver, QueueState};
use crate::semaphore::{Semaphore, SemaphoreValue, Submit, Timeline, Timeout};
use crate::Error;

/// Names a device instance (unique in the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceId(pub u32);

impl DeviceId {
    /// A fresh id, distinct from every other one handed out in this process.
    pub fn next() -> Self {
        use core::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// A mapped range of a buffer, valid while it is borrowed.
pub trait Mapped {
    /// The bytes (readable if the mapping was made with `READ`).
    fn bytes(&self) -> &[u8];
    /// The bytes, writable; [`Error::Access`] if the mapping was made without `WRITE`.
    fn bytes_mut(&mut self) -> Result<&mut [u8], Error>;
}

/// Marker for persistent mapping handles.
pub enum MappingKind {}
impl Kind for MappingKind {
    const NAME: &'static str = "mapping";
}

/// A persistent mapping: made once, used many times, until unmapped or its buffer goes.
pub type PersistentMapping = Handle<MappingKind>;

/// What a driver keeps of a persistent mapping: the range mapped (its length known) and the
/// access it was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MappingRecord {
    /// The range mapped.
    pub span: BufferSpan,
    /// The access the mapping allows.
    pub access: MemoryAccess,
}

/// Host memory handed to a device to import as a buffer: used in place where the device can
/// reach it (a shared-memory device, host-pointer import), copied where it cannot.
#[derive(Debug)]
pub enum HostMemory<'m> {
    /// Memory the device may read and write.
    ReadWrite(&'m mut [u8]),
    /// Memory the device may only read (constants in flash, a shared model file).
    ReadOnly(&'m [u8]),
}

/// Read-only bytes (what a [`Session`](crate::Session) imports module constants from).
impl<'a: 'm, 'm> From<&'a [u8]> for HostMemory<'m> {
    fn from(bytes: &'a [u8]) -> Self {
        HostMemory::ReadOnly(bytes)
    }
}

/// Host data a streaming read pulls from (a slice, a file, a flash region).
pub trait HostSource {
    /// Bytes available.
    fn len(&self) -> u64;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `out` with the bytes at `offset..offset + out.len()`.
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Error>;
}

impl HostSource for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        let oob = Error::OutOfRange {
            what: "host source",
            offset,
            length: out.len() as u64,
            size: <[u8]>::len(self) as u64,
        };
        let start = usize::try_from(offset).map_err(|_| oob)?;
        let bytes = start
            .checked_add(out.len())
            .and_then(|end| self.get(start..end))
            .ok_or(oob)?;
        out.copy_from_slice(bytes);
        Ok(())
    }
}

/// What a streaming read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReadStats {
    /// Bytes moved.
    pub bytes: u64,
    /// Chunks they moved in (each at most the chunk size asked for).
    pub chunks: u64,
}

/// Counts of live objects, for leak checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ObjectCounts {
    /// Buffers (allocated, imported and queue-allocated).
    pub buffers: u32,
    /// Semaphores.
    pub semaphores: u32,
    /// Command buffers.
    pub command_buffers: u32,
    /// Executables.
    pub executables: u32,
    /// Queue operations waiting for semaphores.
    pub pending: u32,
}

impl ObjectCounts {
    /// The counts of a device holding these tables, its semaphores and parked operations
    /// read from its queue.
    pub fn of(
        buffers: usize,
        command_buffers: usize,
        executables: usize,
        queue: &impl QueueState,
    ) -> Self {
        Self {
            buffers: buffers as u32,
            semaphores: queue.semaphore_count() as u32,
            command_buffers: command_buffers as u32,
            executables: executables as u32,
            pending: queue.parked_count() as u32,
        }
    }
}

/// A device: memory, executables, command buffers, semaphores and a queue.
///
/// The semaphore and queue methods have one implementation, here, over the shared
/// [`queue`](crate::queue) and the driver's [`QueueDriver`]; a driver may override them.
pub trait Device: QueueDriver + Sized {
    /// Host memory this driver can import as a buffer without copying.
    type HostMemory;
    /// A scoped mapping; the device cannot be used while it is borrowed.
    type Mapping<'a>: Mapped
    where
        Self: 'a;

    /// This device's id (memoization keys use it).
    fn id(&self) -> DeviceId;
    /// The kinds of memory it offers.
    fn heaps(&self) -> &[MemoryHeap];
    /// Where memory of `memory_type` lives, for [`crate::connection`].
    fn memory_domain(&self, memory_type: MemoryType) -> MemoryDomain;
    /// Statistics of the allocators behind heap `index`.
    fn allocator_stats(&self, heap: usize) -> Result<AllocStats, Error>;
    /// Live objects, for leak checks.
    fn object_counts(&self) -> ObjectCounts;

    /// Allocates `size` bytes; chunked across several allocations when larger than the
    /// heap's `max_allocation_size`.
    fn allocate_buffer(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error>;
    /// Wraps caller memory as a buffer without copying, where the device can use it in place.
    fn import_buffer(
        &mut self,
        memory: Self::HostMemory,
        params: BufferParams,
    ) -> Result<Buffer, Error>;
    /// Releases a buffer; its handle and spans go stale.
    fn release_buffer(&mut self, buffer: Buffer) -> Result<(), Error>;
    /// What the buffer is.
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error>;
    /// Maps a range for the duration of the borrow. Needs host-visible memory, a mapping
    /// usage, the access asked for, a range in bounds and inside one chunk.
    fn map(&mut self, span: BufferSpan, access: MemoryAccess) -> Result<Self::Mapping<'_>, Error>;
    /// Maps a range until [`Device::unmap`]; needs `MAPPING_PERSISTENT` usage.
    fn map_persistent(
        &mut self,
        span: BufferSpan,
        access: MemoryAccess,
    ) -> Result<PersistentMapping, Error>;
    /// The bytes of a persistent mapping (no checks beyond the handle's).
    fn mapped(&mut self, mapping: PersistentMapping) -> Result<Self::Mapping<'_>, Error>;
    /// Ends a persistent mapping.
    fn unmap(&mut self, mapping: PersistentMapping) -> Result<(), Error>;
    /// Host read of any range (across chunks; through staging if not mappable). Waits for
    /// nothing: order it after the work that writes the range.
    fn read_buffer(&mut self, span: BufferSpan, out: &mut [u8]) -> Result<(), Error>;
    /// Host write of any range (across chunks; through staging if not mappable).
    fn write_buffer(&mut self, span: BufferSpan, data: &[u8]) -> Result<(), Error>;

    /// Loads an executable.
    fn load_executable(&mut self, source: ExecutableSource<'_>) -> Result<Executable, Error>;
    /// Releases it.
    fn release_executable(&mut self, executable: Executable) -> Result<(), Error>;

    /// A command buffer with room for `capacity` command slots, referring to at most
    /// `binding_capacity` binding-table slots.
    fn create_command_buffer(
        &mut self,
        mode: CommandBufferMode,
        capacity: u32,
        binding_capacity: u16,
    ) -> Result<CommandBuffer, Error>;
    /// Validates and appends one command.
    fn record(&mut self, command_buffer: CommandBuffer, record: Record<'_>) -> Result<(), Error>;
    /// Ends recording.
    fn end(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        self.command_list(command_buffer)?.end()
    }
    /// Releases it (after any submission using it completes).
    fn release_command_buffer(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        if self.command_list(command_buffer)?.release() {
            self.free_command_buffer(command_buffer)?;
        }
        Ok(())
    }

    /// A timeline semaphore at `initial`.
    fn create_semaphore(&mut self, initial: u64) -> Result<Semaphore, Error> {
        self.queue_mut().insert_timeline(Timeline::new(initial))
    }
    /// Releases it; queued work waiting on it fails.
    fn release_semaphore(&mut self, semaphore: Semaphore) -> Result<(), Error> {
        self.queue_mut().remove_timeline(semaphore)?;
        self.drain_unblocked();
        Ok(())
    }
    /// Its value, or its failure.
    fn query_semaphore(&self, semaphore: Semaphore) -> Result<u64, Error> {
        self.queue().timeline(semaphore)?.query()
    }
    /// Host signal: moves it forward and runs queued work now unblocked.
    fn signal_semaphore(&mut self, semaphore: Semaphore, value: u64) -> Result<(), Error> {
        self.queue_mut().timeline_mut(semaphore)?.signal(value)?;
        self.drain_unblocked();
        Ok(())
    }
    /// Fails it with `code`; queued work waiting on it fails too.
    fn fail_semaphore(&mut self, semaphore: Semaphore, code: u32) -> Result<(), Error> {
        self.queue_mut().timeline_mut(semaphore)?.fail(code);
        self.drain_unblocked();
        Ok(())
    }
    /// Waits until every pair is reached.
    fn wait_semaphores(&mut self, waits: &[SemaphoreValue], timeout: Timeout) -> Result<(), Error> {
        self.drain_unblocked();
        self.queue().check_reached(waits, timeout)
    }

    /// Queue-ordered allocation: the buffer's memory is usable once `submit`'s signals are.
    fn queue_alloca(
        &mut self,
        submit: Submit<'_>,
        params: BufferParams,
        size: u64,
    ) -> Result<Buffer, Error> {
        self.queue().check_submit(&submit)?;
        let buffer = self.allocate_queue_ordered(params, size)?;
        match queue::submit_checked(self, submit, Action::Signal, &[]) {
            Ok(()) => Ok(buffer),
            Err(e) => {
                let _ = self.release_buffer(buffer);
                Err(e)
            }
        }
    }
    /// Queue-ordered release: the memory returns once `submit`'s waits are reached.
    fn queue_dealloca(&mut self, submit: Submit<'_>, buffer: Buffer) -> Result<(), Error> {
        self.buffer_info(buffer)?;
        queue::submit_action(self, submit, Action::Dealloca(buffer))
    }
    /// Fills a range with a 1-, 2- or 4-byte pattern.
    fn queue_fill(
        &mut self,
        submit: Submit<'_>,
        target: BufferSpan,
        pattern: &[u8],
    ) -> Result<(), Error> {
        let target = BufferRef::span(target);
        queue::submit_one_shot(self, submit, 1, Record::Fill { target, pattern })
    }
    /// Writes host bytes into a range (the bytes are copied at the call).
    fn queue_update(
        &mut self,
        submit: Submit<'_>,
        data: &[u8],
        target: BufferSpan,
    ) -> Result<(), Error> {
        if data.len() > MAX_UPDATE_BYTES {
            return Err(Error::Limit {
                what: "update bytes",
                requested: data.len() as u64,
                limit: MAX_UPDATE_BYTES as u64,
            });
        }
        let slots = 1 + data.len().div_ceil(DATA_SLOT_BYTES);
        let target = BufferRef::span(target);
        queue::submit_one_shot(self, submit, slots as u32, Record::Update { target, data })
    }
    /// Copies `length` bytes between ranges.
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
        queue::submit_one_shot(self, submit, 1, record)
    }
    /// Runs a command buffer with `bindings` as its binding table.
    fn queue_execute(
        &mut self,
        submit: Submit<'_>,
        command_buffer: CommandBuffer,
        bindings: &[BufferSpan],
    ) -> Result<(), Error> {
        queue::submit_execute(self, submit, command_buffer, bindings, false)
    }
    /// Streams `source` into `target` in chunks of at most `chunk_bytes`, so staging stays
    /// bounded however large the data is. Host-synchronous: its waits must be reached when
    /// it is submitted; its signals complete with its result.
    fn queue_read<S: HostSource>(
        &mut self,
        submit: Submit<'_>,
        source: &mut S,
        target: BufferSpan,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error> {
        let info = self.buffer_info(target.buffer)?;
        let length =
            info.check_stream_target(target.offset, target.length, source.len(), chunk_bytes)?;
        queue::require_reached(self, &submit)?;
        let result = self.stream_chunks(source, target, length, chunk_bytes);
        queue::finish(self, submit.signals, result.map(|_| ()));
        result
    }
    /// The driver's part of [`queue_read`](Self::queue_read), called once the target range
    /// is checked and the waits are reached: moves the first `length` bytes of `source` into
    /// `target` in chunks of at most `chunk_bytes`.
    fn stream_chunks<S: HostSource>(
        &mut self,
        source: &mut S,
        target: BufferSpan,
        length: u64,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error>;
}

/// The queue's view of a device: the `Device` methods of the same names.
impl<D: Device> queue::QueueDevice for D {
    #[inline(always)]
    fn release_buffer(&mut self, buffer: Buffer) -> Result<(), Error> {
        Device::release_buffer(self, buffer)
    }

    #[inline(always)]
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error> {
        Device::buffer_info(self, buffer)
    }

    #[inline(always)]
    fn create_command_buffer(
        &mut self,
        mode: CommandBufferMode,
        capacity: u32,
        binding_capacity: u16,
    ) -> Result<CommandBuffer, Error> {
        Device::create_command_buffer(self, mode, capacity, binding_capacity)
    }

    #[inline(always)]
    fn record(&mut self, command_buffer: CommandBuffer, record: Record<'_>) -> Result<(), Error> {
        Device::record(self, command_buffer, record)
    }

    #[inline(always)]
    fn end(&mut self, command_buffer: CommandBuffer) -> Result<(), Error> {
        Device::end(self, command_buffer)
    }
}
