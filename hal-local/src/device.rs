//! The local device: its tables, its memory region, and its set-up (buffers are in
//! `buffer`, mappings in `mapping`).

use crate::alloc::DeviceAllocator;
use crate::buffer::{BufferRec, ChunkKind, ChunkRec};
use crate::config::LocalConfig;
use crate::kernel::{Entry, Kernel};
use crate::memory::Region;
use crate::replay::Replayers;
use crate::storage::LocalStorage;
use hal_core::buffer::BufferKind;
use hal_core::command::{Command, CommandBufferKind, CommandList};
use hal_core::device::{MappingKind, ObjectCounts};
use hal_core::executable::ExecutableKind;
use hal_core::handle::TableView;
use hal_core::memory::alloc::{ArenaView, Range, Tlsf};
use hal_core::memory::{BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::queue::{ParkedSlot, QueueView};
use hal_core::semaphore::{SemaphoreKind, Timeline};
use hal_core::{BufferSpan, DeviceId, Error, MemoryDomain};

/// The slot pool's allocator counts in units of this many per slot, so its 16-unit granule
/// is one slot (a one-command buffer takes one slot, not sixteen).
pub(crate) const SLOT_UNIT: u64 = 16;

/// Every offset the device hands out is a multiple of this.
pub const MIN_ALIGNMENT: u64 = 16;

#[derive(Clone, Copy)]
pub(crate) struct MappingRec {
    pub(crate) span: BufferSpan,
    pub(crate) access: MemoryAccess,
}

#[derive(Clone, Copy)]
pub(crate) struct ExecutableRec {
    pub(crate) entry: Entry,
}

#[derive(Clone, Copy)]
pub(crate) struct CommandBufferRec {
    /// Index of its first slot, and how many it has.
    pub(crate) first_slot: usize,
    pub(crate) slot_count: usize,
    pub(crate) list: CommandList,
    /// Its slots in the shared slot pool, in [`SLOT_UNIT`]s (to free them).
    pub(crate) slots: Range,
}

/// The local-CPU device.
///
/// Its tables live in a [`LocalStorage`] it borrows for `'m`, with the memory region: their
/// capacities are the storage's const parameters, so firmware sizes every table at compile
/// time and the device's own type names only its allocator.
///
/// `A` allocates the device's memory and its command slots (see [`DeviceAllocator`]):
/// [`Tlsf`] by default (general purpose: any order of frees); [`Arena`](crate::alloc::Arena) (a bump allocator,
/// [`Bump`](crate::alloc::Bump)) for firmware that allocates at start-up and frees in
/// reverse order or not at all. It is about 4 KB of code smaller on Cortex-M, but space
/// freed out of order comes back only once everything above it is freed too.
pub struct LocalDevice<'m, A = Tlsf<256>> {
    pub(crate) id: DeviceId,
    /// Where the region lives (from the config).
    pub(crate) domain: MemoryDomain,
    /// The kernels linked in (from the config).
    pub(crate) kernels: &'static [Kernel],
    pub(crate) region: Region<'m>,
    pub(crate) heaps: [MemoryHeap; 1],
    /// Alignment of the region's start: the most any buffer can be aligned to.
    pub(crate) region_alignment: u64,
    pub(crate) general: &'m mut A,
    /// Offset of the transient arena in the region.
    pub(crate) transient_base: u64,
    /// The alignment the transient arena's start has in memory (a power of two, at most the
    /// region's): the largest it serves.
    pub(crate) transient_alignment: u64,
    pub(crate) transient: &'m mut ArenaView,
    pub(crate) buffers: &'m mut TableView<BufferKind, BufferRec>,
    pub(crate) chunks: &'m mut TableView<ChunkKind, ChunkRec>,
    pub(crate) mappings: &'m mut TableView<MappingKind, MappingRec>,
    pub(crate) executables: &'m mut TableView<ExecutableKind, ExecutableRec>,
    pub(crate) command_buffers: &'m mut TableView<CommandBufferKind, CommandBufferRec>,
    pub(crate) slots: &'m mut [Command],
    pub(crate) slot_alloc: &'m mut A,
    /// Semaphores and parked queue operations.
    pub(crate) queue: QueueView<'m>,
    /// How each command kind recorded so far is replayed.
    pub(crate) replayers: Replayers<A>,
    /// How operations are parked and later run: `None` where the storage has no room to
    /// park any (`PENDING = 0`), so that firmware links no parked-operation path.
    pub(crate) parking: Option<Parking<Self>>,
    #[cfg(feature = "threads")]
    pub(crate) pool: Option<crate::pool::WorkerPool>,
    #[cfg(feature = "parallel")]
    pub(crate) team: Option<&'static dyn crate::workers::Workers>,
}

// SAFETY: the raw pointers in `Region` and `Imported` stand for the `&'m mut [u8]` (region,
// read-write imports) and `&'m [u8]` (read-only imports) the device was given, which are
// `Send`; everything else it holds is `Send` (`A` by the bound). Moving the device moves that
// exclusive (or shared, immutable) access with it. It is not `Sync`: `&self` methods write
// memory.
unsafe impl<A: DeviceAllocator + Send> Send for LocalDevice<'_, A> {}

/// The parked-operation path of a device that has room for parked operations.
pub(crate) struct Parking<D> {
    /// Runs the parked operations that are now unblocked.
    pub(crate) drain: fn(&mut D),
}

/// The borrowed tables a device is made of: a [`LocalStorage`] with its capacities erased.
struct Parts<'m, A> {
    buffers: &'m mut TableView<BufferKind, BufferRec>,
    chunks: &'m mut TableView<ChunkKind, ChunkRec>,
    mappings: &'m mut TableView<MappingKind, MappingRec>,
    executables: &'m mut TableView<ExecutableKind, ExecutableRec>,
    command_buffers: &'m mut TableView<CommandBufferKind, CommandBufferRec>,
    semaphores: &'m mut TableView<SemaphoreKind, Timeline>,
    parked: &'m mut [ParkedSlot],
    slots: &'m mut [Command],
    transient: &'m mut ArenaView,
    general: &'m mut A,
    slot_alloc: &'m mut A,
}

impl<'m, A: DeviceAllocator> LocalDevice<'m, A> {
    /// A device over `storage`'s tables and `memory`, which it uses for every buffer until
    /// it is dropped. `storage` is emptied first: whatever an earlier device left there is
    /// gone (a handle of that device means nothing to this one).
    ///
    /// Firmware keeps the storage in a `static` (through `static_cell`'s `ConstStaticCell`,
    /// say, so it is taken once and lands in `.bss`) and the device wherever it likes: the
    /// device itself is a few hundred bytes. See [`LocalStorage`] for an example.
    #[inline]
    pub fn new<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
    >(
        storage: &'m mut LocalStorage<OBJECTS, SLOTS, NODES, PENDING, A>,
        memory: &'m mut [u8],
        config: LocalConfig,
    ) -> Result<Self, Error> {
        // All zero bytes: a memset, and nothing to drop (every record is plain data).
        *storage = LocalStorage::EMPTY;
        let parts = Parts {
            buffers: &mut storage.buffers,
            chunks: &mut storage.chunks,
            mappings: &mut storage.mappings,
            executables: &mut storage.executables,
            command_buffers: &mut storage.command_buffers,
            semaphores: &mut storage.semaphores,
            parked: &mut storage.parked,
            slots: &mut storage.slots,
            transient: &mut storage.transient,
            general: &mut storage.general,
            slot_alloc: &mut storage.slot_alloc,
        };
        let mut device = Self::over(parts, memory, config)?;
        // Decided here, where the capacity is a constant: with none, the parking path is
        // never referenced.
        device.parking = if PENDING == 0 {
            None
        } else {
            Some(Parking {
                drain: hal_core::queue::drain::<Self>,
            })
        };
        Ok(device)
    }

    /// [`new`](Self::new), whatever the storage's capacities.
    fn over(parts: Parts<'m, A>, memory: &'m mut [u8], config: LocalConfig) -> Result<Self, Error> {
        // Start at a 16-byte boundary so every offset keeps MIN_ALIGNMENT in absolute terms.
        let skip = memory
            .as_ptr()
            .align_offset(MIN_ALIGNMENT as usize)
            .min(memory.len());
        let memory = &mut memory[skip..];
        let size = memory.len() as u64;
        if config.transient_bytes > size {
            return Err(Error::InvalidArgument("transient_bytes exceeds the region"));
        }
        if config.max_allocation_size < 64 {
            return Err(Error::InvalidArgument("max_allocation_size below 64 bytes"));
        }
        if config.workers == 0 {
            return Err(Error::InvalidArgument("workers must be at least 1"));
        }
        #[cfg(feature = "parallel")]
        if config.workers > 1 && config.team.is_some() {
            return Err(Error::InvalidArgument(
                "a device takes a worker pool or a team of cores, not both",
            ));
        }
        #[cfg(not(feature = "threads"))]
        if config.workers > 1 {
            return Err(Error::Unsupported(
                "workers > 1 needs the `threads` feature",
            ));
        }
        let region = Region::new(memory);
        let region_alignment = 1u64 << (region.base_addr() | (1 << 12)).trailing_zeros();
        // The arena takes the top `transient_bytes`, its start rounded down to
        // `MIN_ALIGNMENT` (the arena gains the difference). It aligns offsets from that start,
        // so it serves alignments up to the start's own in memory; larger ones go to the
        // general heap. (Rounding the start down to the region's alignment instead, up to
        // 4 KiB, left a 4-KiB region placed on a 4-KiB boundary no general heap at all.)
        let transient_base = if config.transient_bytes == 0 {
            size
        } else {
            (size - config.transient_bytes) & !(MIN_ALIGNMENT - 1)
        };
        let transient_alignment = 1u64
            << ((region.base_addr() as u64 + transient_base) | region_alignment).trailing_zeros();
        let heap = MemoryHeap::new(
            MemoryType::DEVICE_LOCAL
                | MemoryType::HOST_VISIBLE
                | MemoryType::HOST_COHERENT
                | MemoryType::HOST_CACHED,
            BufferUsage::all(),
            config.max_allocation_size.min(size.max(64)),
            MIN_ALIGNMENT,
            size.max(64),
        )?;
        let Parts {
            buffers,
            chunks,
            mappings,
            executables,
            command_buffers,
            semaphores,
            parked,
            slots,
            transient,
            general,
            slot_alloc,
        } = parts;
        *general = A::over(transient_base);
        transient.renew(size - transient_base);
        *slot_alloc = A::over(slots.len() as u64 * SLOT_UNIT);
        Ok(Self {
            id: DeviceId::next(),
            domain: config.domain,
            kernels: config.kernels,
            region,
            heaps: [heap],
            region_alignment,
            general,
            transient_base,
            transient_alignment,
            transient,
            buffers,
            chunks,
            mappings,
            executables,
            command_buffers,
            slots,
            slot_alloc,
            queue: QueueView::over(semaphores, parked),
            replayers: Replayers::NONE,
            parking: None,
            #[cfg(feature = "threads")]
            pool: crate::pool::WorkerPool::new(config.workers),
            #[cfg(feature = "parallel")]
            team: config.team,
        })
    }

    /// Where a dispatch's workgroups and tiles run besides this thread, if anywhere.
    #[cfg(feature = "parallel")]
    pub(crate) fn workers(&self) -> Option<&dyn crate::workers::Workers> {
        #[cfg(feature = "threads")]
        if let Some(pool) = &self.pool {
            return Some(pool);
        }
        self.team
    }

    pub(crate) fn counts(&self) -> ObjectCounts {
        ObjectCounts::of(
            self.buffers.len(),
            self.command_buffers.len(),
            self.executables.len(),
            &self.queue,
        )
    }
}
