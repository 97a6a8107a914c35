//! The storage a local device keeps its objects in, sized at compile time and given to
//! [`LocalDevice::new`](crate::LocalDevice::new) by reference (as embassy's network stack
//! takes its `StackResources`).

use crate::alloc::DeviceAllocator;
use crate::types::{BufferRec, ChunkKind, ChunkRec, CommandBufferRec, ExecutableRec};
use hal_core::buffer::BufferKind;
use hal_core::command::{Command, CommandBufferKind};
use hal_core::device::{MappingKind, MappingRecord};
use hal_core::executable::ExecutableKind;
use hal_core::handle::Table;
use hal_core::memory::alloc::{Arena, Tlsf};
use hal_core::queue::ParkedSlot;
use hal_core::semaphore::{SemaphoreKind, Timeline};
use hal_core::zeroed::ZeroOption;

/// Every table a [`LocalDevice`](crate::LocalDevice) uses, with its capacities:
/// `OBJECTS` entries in each object table (buffers, mappings, executables, command buffers,
/// semaphores, transient allocations), `SLOTS` command slots shared by all command buffers,
/// `NODES` allocator nodes (for memory and for command slots), `PENDING` queue operations
/// waiting on semaphores, and the allocator `A` (see [`DeviceAllocator`]) twice: for the
/// device's memory and for its command slots.
///
/// [`EMPTY`](Self::EMPTY) is all zero bytes, so firmware declares its storage as a `static`
/// that lands in `.bss` (no flash for its image, never built on the stack); the device that
/// borrows it is a few hundred bytes:
///
/// ```
/// use hal_local::{LocalConfig, LocalDevice, LocalStorage};
///
/// let mut storage: LocalStorage<8, 16, 8, 2> = LocalStorage::EMPTY;
/// let mut memory = [0u8; 4096];
/// let device = LocalDevice::new(&mut storage, &mut memory, LocalConfig::DEFAULT)?;
/// # drop(device);
/// # Ok::<(), hal_core::Error>(())
/// ```
///
/// `PENDING = 0` keeps no parked operations: nothing ever waits, and a submission whose
/// waits are not reached when it is submitted is refused with
/// [`Error::TableFull`](hal_core::Error::TableFull) (what it holds goes back, its signals
/// are untouched). For firmware that submits with [`Submit::NOW`](hal_core::Submit::NOW) or
/// with waits already reached.
pub struct LocalStorage<
    const OBJECTS: usize = 64,
    const SLOTS: usize = 4096,
    const NODES: usize = 256,
    const PENDING: usize = 16,
    A = Tlsf<NODES>,
> {
    pub(crate) buffers: Table<BufferKind, BufferRec, OBJECTS>,
    pub(crate) chunks: Table<ChunkKind, ChunkRec, NODES>,
    pub(crate) mappings: Table<MappingKind, MappingRecord, OBJECTS>,
    pub(crate) executables: Table<ExecutableKind, ExecutableRec, OBJECTS>,
    pub(crate) command_buffers: Table<CommandBufferKind, CommandBufferRec, OBJECTS>,
    pub(crate) semaphores: Table<SemaphoreKind, Timeline, OBJECTS>,
    pub(crate) parked: [ParkedSlot; PENDING],
    pub(crate) slots: [Command; SLOTS],
    pub(crate) transient: Arena<OBJECTS>,
    pub(crate) general: A,
    pub(crate) slot_alloc: A,
}

// SAFETY: the raw pointers in buffer records stand for memory a device borrowed (for its
// `'m`); they are read only through that device, which holds the storage for as long, and a
// new device drops every record it finds before it uses the storage. Everything else is
// plain data, and `A` is `Send` by the bound. So moving the storage (or sharing it through a
// cell that hands it out once) moves no access to anyone else's memory.
unsafe impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: Send,
    > Send for LocalStorage<OBJECTS, SLOTS, NODES, PENDING, A>
{
}

impl<
        const OBJECTS: usize,
        const SLOTS: usize,
        const NODES: usize,
        const PENDING: usize,
        A: DeviceAllocator,
    > LocalStorage<OBJECTS, SLOTS, NODES, PENDING, A>
{
    /// Empty tables, all zero bytes.
    pub const EMPTY: Self = Self {
        buffers: Table::new(),
        chunks: Table::new(),
        mappings: Table::new(),
        executables: Table::new(),
        command_buffers: Table::new(),
        semaphores: Table::new(),
        parked: [const { ZeroOption::None }; PENDING],
        slots: [Command::EMPTY; SLOTS],
        transient: Arena::new(0),
        general: A::EMPTY,
        slot_alloc: A::EMPTY,
    };
}
