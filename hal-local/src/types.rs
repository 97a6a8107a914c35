//! The local driver's data types, in one place (as wgpu-hal keeps a backend's): the device
//! and the records its tables hold. The sibling modules hold the `impl` blocks, one concept
//! each (`device`: set-up; `storage`: the tables' storage; `buffer`: buffers and their
//! bytes; `mapping`; `replay`: running command lists; `driver`: `hal_core::Device` and
//! `QueueDriver`), and import these types; nothing here imports them.

use crate::alloc::DeviceAllocator;
use crate::kernel::{Entry, Kernel};
use crate::memory::{Imported, Region};
use hal_core::buffer::BufferKind;
use hal_core::command::{BufferRecord, Command, CommandBufferKind, CommandList};
use hal_core::device::{MappingKind, MappingRecord};
use hal_core::executable::ExecutableKind;
use hal_core::handle::{Handle, Kind, TableView};
use hal_core::memory::alloc::{ArenaView, Range, Tlsf};
use hal_core::memory::MemoryHeap;
use hal_core::queue::QueueView;
use hal_core::{BufferInfo, BufferSpan, DeviceId, Error, MemoryDomain};

/// The slot pool's allocator counts in units of this many per slot, so its 16-unit granule
/// is one slot (a one-command buffer takes one slot, not sixteen).
pub(crate) const SLOT_UNIT: u64 = 16;

/// Every offset the device hands out is a multiple of this.
pub const MIN_ALIGNMENT: u64 = 16;

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
/// Its tables live in a [`LocalStorage`](crate::LocalStorage) it borrows for `'m`, with the
/// memory region: their capacities are the storage's const parameters, so firmware sizes
/// every table at compile time and the device's own type names only its allocator.
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
    pub(crate) mappings: &'m mut TableView<MappingKind, MappingRecord>,
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

/// Marker for chunk records.
pub(crate) enum ChunkKind {}
impl Kind for ChunkKind {
    const NAME: &'static str = "chunk";
}

/// Where a chunk came from, so it goes back to the same allocator.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    General,
    Transient,
}

/// One allocation backing part of a buffer; chunks of a buffer form a list in order.
#[derive(Clone, Copy)]
pub(crate) struct ChunkRec {
    /// Offset of the chunk in the region.
    pub(crate) offset: u64,
    /// The allocator's range (to free it).
    pub(crate) range: Range,
    pub(crate) origin: Origin,
    pub(crate) next: Option<Handle<ChunkKind>>,
}

#[derive(Clone, Copy)]
pub(crate) enum Backing {
    /// Device memory: the first chunk, which links to the rest.
    Device(ChunkRec),
    Imported(Imported),
}

#[derive(Clone, Copy)]
pub(crate) struct BufferRec {
    pub(crate) info: BufferInfo,
    pub(crate) backing: Backing,
}

impl BufferRecord for BufferRec {
    #[inline(always)]
    fn info(&self) -> &BufferInfo {
        &self.info
    }
}

/// How one kind of recorded command is replayed: the device, the command's slots (its own
/// first, its payload after it, then the rest of the list), the binding table of the
/// submission. Returns how many slots the command took. Each replay decodes its own kind, so
/// a firmware that never records it links neither its replay nor its decoding.
pub(crate) type Replay<A> =
    fn(&LocalDevice<'_, A>, &[Command], &[BufferSpan]) -> Result<usize, Error>;

/// The replay of each transfer command kind this device has recorded (`None`: never
/// recorded). Dispatches are not in here: every firmware dispatches, so
/// [`execute`](LocalDevice::execute) runs them directly, inlined in its loop.
///
/// Filled in at record time ([`LocalDevice::register_replay`]) rather than matched at
/// replay time, so a firmware that records only dispatches links no fill, update or copy
/// replay (2.6 KB on Cortex-M4).
pub(crate) struct Replayers<A> {
    pub(crate) fill: Option<Replay<A>>,
    pub(crate) update: Option<Replay<A>>,
    pub(crate) copy: Option<Replay<A>>,
}

impl<A> Replayers<A> {
    pub(crate) const NONE: Self = Self {
        fill: None,
        update: None,
        copy: None,
    };
}
