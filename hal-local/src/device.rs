//! Setting up a local device: its tables borrowed from a [`LocalStorage`], its memory
//! region carved into the general heap and the transient arena. The device's type and the
//! records its tables hold are in `types`; buffers are in `buffer`, mappings in `mapping`.

use crate::alloc::DeviceAllocator;
use crate::config::LocalConfig;
use crate::memory::Region;
use crate::storage::LocalStorage;
use crate::types::{
    BufferRec, ChunkKind, ChunkRec, CommandBufferRec, ExecutableRec, Parking, Replayers, SLOT_UNIT,
};
use hal_core::buffer::BufferKind;
use hal_core::command::{Command, CommandBufferKind};
use hal_core::device::{MappingKind, MappingRecord, ObjectCounts};
use hal_core::executable::ExecutableKind;
use hal_core::handle::TableView;
use hal_core::memory::alloc::ArenaView;
use hal_core::memory::{BufferUsage, MemoryHeap, MemoryType};
use hal_core::queue::{ParkedSlot, QueueView};
use hal_core::semaphore::{SemaphoreKind, Timeline};
use hal_core::{DeviceId, Error};

pub use crate::types::{LocalDevice, MIN_ALIGNMENT};

/// The borrowed tables a device is made of: a [`LocalStorage`] with its capacities erased.
struct Parts<'m, A> {
    buffers: &'m mut TableView<BufferKind, BufferRec>,
    chunks: &'m mut TableView<ChunkKind, ChunkRec>,
    mappings: &'m mut TableView<MappingKind, MappingRecord>,
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
