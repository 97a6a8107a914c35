//! The local device: its tables, its memory region, and its set-up (buffers are in
//! `buffer`, mappings in `mapping`).

use crate::alloc::DeviceAllocator;
use crate::buffer::{BufferRec, ChunkKind, ChunkRec};
use crate::config::LocalConfig;
use crate::kernel::{Kernel, KernelFn};
use crate::memory::Region;
use crate::replay::Replayers;
use hal_core::buffer::BufferKind;
use hal_core::command::{Command, CommandBufferKind, CommandList};
use hal_core::device::{MappingKind, ObjectCounts};
use hal_core::executable::ExecutableKind;
use hal_core::handle::Table;
use hal_core::memory::alloc::{Arena, Range, Tlsf};
use hal_core::memory::{BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::queue::Queue;
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
    pub(crate) entry: KernelFn,
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
/// Capacities are const generics so firmware sizes every table at compile time:
/// `OBJECTS` entries in each object table, `SLOTS` command slots shared by all command
/// buffers, `NODES` allocator nodes (for memory and for command slots), `PENDING` queue
/// operations waiting on semaphores.
///
/// `PENDING = 0` links no parked-operation queue at all: nothing ever waits, and a
/// submission whose waits are not reached when it is submitted is refused with
/// [`Error::TableFull`] (what it holds goes back, its signals are untouched). For firmware
/// that submits with [`Submit::NOW`](hal_core::Submit::NOW) or with waits already reached.
///
/// `A` allocates the device's memory and its command slots (see [`DeviceAllocator`]):
/// [`Tlsf`] by default (general purpose: any order of frees); [`Arena`] (a bump allocator,
/// [`Bump`](crate::alloc::Bump)) for firmware that allocates at start-up and frees in
/// reverse order or not at all. It is about 4 KB of code smaller on Cortex-M, but space
/// freed out of order comes back only once everything above it is freed too.
pub struct LocalDevice<
    'm,
    const OBJECTS: usize = 64,
    const SLOTS: usize = 4096,
    const NODES: usize = 256,
    const PENDING: usize = 16,
    A = Tlsf<NODES>,
> {
    pub(crate) id: DeviceId,
    /// Where the region lives (from the config).
    pub(crate) domain: MemoryDomain,
    /// The kernels linked in (from the config); `None` until `init`.
    pub(crate) kernels: Option<&'static [Kernel]>,
    pub(crate) region: Region<'m>,
    pub(crate) heaps: [MemoryHeap; 1],
    /// Alignment of the region's start: the most any buffer can be aligned to.
    pub(crate) region_alignment: u64,
    pub(crate) general: A,
    /// Offset of the transient arena in the region.
    pub(crate) transient_base: u64,
    pub(crate) transient: Arena<OBJECTS>,
    pub(crate) buffers: Table<BufferKind, BufferRec, OBJECTS>,
    pub(crate) chunks: Table<ChunkKind, ChunkRec, NODES>,
    pub(crate) mappings: Table<MappingKind, MappingRec, OBJECTS>,
    pub(crate) executables: Table<ExecutableKind, ExecutableRec, OBJECTS>,
    pub(crate) command_buffers: Table<CommandBufferKind, CommandBufferRec, OBJECTS>,
    pub(crate) slots: [Command; SLOTS],
    pub(crate) slot_alloc: A,
    /// Semaphores and parked queue operations.
    pub(crate) queue: Queue<OBJECTS, PENDING>,
    /// How each command kind recorded so far is replayed.
    pub(crate) replayers: Replayers<OBJECTS, SLOTS, NODES, PENDING, A>,
    #[cfg(feature = "threads")]
    pub(crate) pool: Option<crate::pool::WorkerPool>,
}

// SAFETY: the raw pointers in `Region` and `Imported` stand for the `&'m mut [u8]` (region,
// read-write imports) and `&'m [u8]` (read-only imports) the device was given, which are
// `Send`; everything else it holds is `Send` (`A` by the bound). Moving the device moves that exclusive (or
// shared, immutable) access with it. It is not `Sync`: `&self` methods write memory.
unsafe impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator + Send,
    > Send for LocalDevice<'_, OBJECTS, SLOTS, NODES, PENDING, A>
{
}

impl<
        'm,
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > LocalDevice<'m, OBJECTS, SLOTS, NODES, PENDING, A>
{
    /// A device with no memory yet, for a `static`: every allocation fails until
    /// [`init`](Self::init) gives it its region. It is all zero bytes, so a `static` holding
    /// it lands in `.bss` (no flash for its image) and firmware never builds the device's
    /// tables (tens of KiB) on the stack:
    ///
    /// ```
    /// use hal_local::{LocalConfig, LocalDevice};
    ///
    /// let mut device: LocalDevice<'_, 8, 16, 8, 2> = LocalDevice::EMPTY;
    /// let mut memory = [0u8; 4096];
    /// device.init(&mut memory, LocalConfig::DEFAULT)?;
    /// // Once only.
    /// let mut more = [0u8; 4096];
    /// assert!(device.init(&mut more, LocalConfig::DEFAULT).is_err());
    /// # Ok::<(), hal_core::Error>(())
    /// ```
    pub const EMPTY: Self = Self {
        id: DeviceId(0),
        // Every field zero bytes: `init` sets the real values.
        domain: MemoryDomain::Host,
        kernels: None,
        region: Region::EMPTY,
        heaps: [MemoryHeap {
            types: MemoryType::empty(),
            allowed_usage: BufferUsage::empty(),
            max_allocation_size: 0,
            min_alignment: 0,
            size: 0,
        }],
        region_alignment: 0,
        general: A::EMPTY,
        transient_base: 0,
        transient: Arena::new(0),
        buffers: Table::new(),
        chunks: Table::new(),
        mappings: Table::new(),
        executables: Table::new(),
        command_buffers: Table::new(),
        slots: [Command::EMPTY; SLOTS],
        slot_alloc: A::EMPTY,
        queue: Queue::EMPTY,
        replayers: Replayers::NONE,
        #[cfg(feature = "threads")]
        pool: None,
    };

    /// A device over `memory`, which it uses for every buffer until it is dropped.
    pub fn new(memory: &'m mut [u8], config: LocalConfig) -> Result<Self, Error> {
        let mut device = Self::EMPTY;
        device.init(memory, config)?;
        Ok(device)
    }

    /// Gives an [`EMPTY`](Self::EMPTY) device its memory, in place; then it is what
    /// [`new`](Self::new) returns. A device is initialized once: a second call fails with
    /// [`Error::InvalidArgument`] and changes nothing.
    pub fn init(&mut self, memory: &'m mut [u8], config: LocalConfig) -> Result<(), Error> {
        if self.id != DeviceId(0) {
            return Err(Error::InvalidArgument("the device is already initialized"));
        }
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
        #[cfg(not(feature = "threads"))]
        if config.workers > 1 {
            return Err(Error::Unsupported(
                "workers > 1 needs the `threads` feature",
            ));
        }
        let region = Region::new(memory);
        let region_alignment = 1u64 << (region.base_addr() | (1 << 12)).trailing_zeros();
        // The arena aligns offsets from its own start, so that start keeps the region's
        // alignment (the arena gains the difference).
        let transient_base = if config.transient_bytes == 0 {
            size
        } else {
            // `region_alignment` is a power of two: rounding down is a mask.
            (size - config.transient_bytes) & !(region_alignment - 1)
        };
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
        self.id = DeviceId::next();
        self.domain = config.domain;
        self.kernels = Some(config.kernels);
        self.region = region;
        self.heaps = [heap];
        self.region_alignment = region_alignment;
        self.general = A::over(transient_base);
        self.transient_base = transient_base;
        self.transient = Arena::new(size - transient_base);
        self.slot_alloc = A::over(SLOTS as u64 * SLOT_UNIT);
        #[cfg(feature = "threads")]
        {
            self.pool = crate::pool::WorkerPool::new(config.workers);
        }
        Ok(())
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
