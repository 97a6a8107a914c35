//! The Vulkan driver's data types, in one place (as wgpu-hal keeps a backend's): the device,
//! the records its tables hold, and what those records keep (plans, recordings, pipelines,
//! work in flight). The sibling modules hold the `impl` blocks, one concept each (`device`:
//! set-up and teardown; `buffer`, `sparse`, `import`, `transfer`, `load`: buffers and their
//! bytes; `executable`: pipelines; `command`: planning and recording; `inflight`: work in
//! flight; `driver`: `hal_core::Device`), and import these types; nothing here imports them.

use crate::config::VulkanConfig;
use crate::instance::Context;
use crate::memory::{Memory, Placement};
use crate::profile::Profiler;
use crate::staging::InternalBuffer;
use ash::vk;
use hal_core::buffer::BufferKind;
use hal_core::command::{BufferRecord, Command, CommandBufferKind, CommandList, MAX_BINDINGS};
use hal_core::device::{MappingKind, MappingRecord};
use hal_core::executable::ExecutableKind;
use hal_core::handle::Table;
use hal_core::queue::Queue;
use hal_core::{BufferInfo, BufferSpan, DeviceId};
use std::marker::PhantomData;

/// Buffers a device can hold.
pub const MAX_BUFFERS: usize = 1024;
/// Semaphores, command buffers, executables and persistent mappings a device can hold.
pub const MAX_OBJECTS: usize = 256;
/// Queue operations that can wait for semaphores at once.
pub const MAX_PENDING: usize = 64;
/// Command slots all command buffers of a device may hold together.
pub const MAX_COMMAND_SLOTS: usize = 1 << 18;

/// A Vulkan device behind hal-core's `Device` trait.
///
/// Queue operations run in submission order once their waits are reached (work waiting on
/// semaphores nothing has signalled yet is parked, as on the local driver) and are submitted
/// to the GPU without host waits; the host blocks in `wait_semaphores`, host transfers and
/// mappings, and where it must destroy or rewrite what pending work may use (see the
/// `inflight` module).
pub struct VulkanDevice<'m> {
    pub(crate) id: DeviceId,
    pub(crate) config: VulkanConfig,
    pub(crate) ctx: Context,
    pub(crate) memory: Memory,
    pub(crate) sparse: Vec<Option<SparseHeap>>,
    pub(crate) pipelines: Pipelines,
    pub(crate) buffers: Box<Table<BufferKind, BufferRec, MAX_BUFFERS>>,
    pub(crate) mappings: Box<Table<MappingKind, MappingRecord, MAX_OBJECTS>>,
    pub(crate) executables: Box<Table<ExecutableKind, ExecutableRec, MAX_OBJECTS>>,
    pub(crate) command_buffers: Box<Table<CommandBufferKind, CommandBufferRec, MAX_OBJECTS>>,
    pub(crate) slots_in_use: usize,
    /// Semaphores and parked queue operations.
    pub(crate) queue: Box<Queue<MAX_OBJECTS, MAX_PENDING>>,
    /// Bumped whenever a buffer or a pipeline a recording's table or commands may name is
    /// released: a kept recording replays without planning only at the generation it was
    /// made.
    pub(crate) memo_generation: u64,
    /// Bumped whenever a buffer's own `VkBuffer` (sparse, imported) or a pipeline is
    /// destroyed; with the blocks `Memory` destroyed, see [`Self::objects_destroyed`].
    pub(crate) object_generation: u64,
    /// Executions replayed from a kept recording.
    pub(crate) memo_hits: u64,
    pub(crate) staging: Option<InternalBuffer>,
    pub(crate) dummy: Option<InternalBuffer>,
    /// What pending submissions may still use, with the progress value each waits for.
    pub(crate) retired: Vec<(u64, Retired)>,
    /// Per semaphore (by handle index): what its latest device signal waits for.
    pub(crate) signals: Box<[DeviceSignal; MAX_OBJECTS]>,
    /// Host transfers that went through the staging buffer (none where memory is
    /// host-visible).
    pub(crate) staged_transfers: u64,
    /// Dispatch timestamps, where profiling is on.
    pub(crate) profiler: Option<Profiler>,
    pub(crate) _memory: PhantomData<&'m mut [u8]>,
}

// SAFETY: the raw pointers the device holds are mappings of its own device memory and the
// caller's imported memory (borrowed for 'm as `&mut`/`&`, which are `Send`); Vulkan handles
// may be used from any thread when access is externally synchronized, which `&mut self`
// guarantees. It is not `Sync`.
unsafe impl Send for VulkanDevice<'_> {}

/// What backs a buffer's bytes.
pub(crate) enum Backing {
    /// One allocation per chunk, each a range of a block's buffer (a buffer of one chunk is
    /// the common case).
    Chunks(Vec<Placement>),
    /// One sparse `VkBuffer` over every chunk; chunk `i` is bound at `i * chunk_size` to the
    /// memory of `chunks[i]`.
    Sparse {
        buffer: vk::Buffer,
        chunks: Vec<Placement>,
    },
    /// Host memory imported in place (`VK_EXT_external_memory_host`): the buffer starts
    /// `offset` bytes into the imported memory.
    Host {
        buffer: vk::Buffer,
        memory: vk::DeviceMemory,
        offset: u64,
        ptr: *mut u8,
    },
}

/// A buffer.
pub(crate) struct BufferRec {
    pub(crate) info: BufferInfo,
    pub(crate) backing: Backing,
    /// Whether the host can reach the bytes through a pointer.
    pub(crate) host_visible: bool,
    /// Host memory a copying import writes back to when the buffer is released.
    pub(crate) write_back: Option<(*mut u8, usize)>,
}

/// Where one chunk's bytes are, for the device and (if visible) for the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) buffer: vk::Buffer,
    /// Offset in `buffer`.
    pub(crate) offset: u64,
    /// Host address of the bytes (null if the host cannot see them).
    pub(crate) host: *mut u8,
    /// Bytes.
    pub(crate) len: u64,
    /// Offset of the piece from the start of the range it is part of.
    pub(crate) at: u64,
}

impl BufferRecord for BufferRec {
    #[inline(always)]
    fn info(&self) -> &BufferInfo {
        &self.info
    }
}

/// A recorded `VkCommandBuffer` kept for replay.
pub(crate) struct Memo {
    pub(crate) plan: Vec<Step>,
    /// The binding table the plan was made with.
    pub(crate) table: Vec<BufferSpan>,
    pub(crate) generation: u64,
    /// [`VulkanDevice::objects_destroyed`] when it was recorded.
    pub(crate) objects: u64,
    pub(crate) recording: Recording,
}

/// A recorded command buffer and the descriptor pool its sets came from (none with push
/// descriptors).
#[derive(Clone, Copy)]
pub(crate) struct Recording {
    pub(crate) cb: vk::CommandBuffer,
    pub(crate) pool: Option<vk::DescriptorPool>,
}

/// A command buffer.
pub(crate) struct CommandBufferRec {
    pub(crate) list: CommandList,
    pub(crate) slots: Vec<Command>,
    /// Update data and fill edges, copied to the device from here.
    pub(crate) upload: Option<InternalBuffer>,
    pub(crate) memo: Option<Memo>,
    /// The progress value of its last submission (0: never submitted).
    pub(crate) submitted: u64,
}

/// How a dispatch gets its grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Grid {
    Direct([u32; 3]),
    Indirect(vk::Buffer, u64),
}

/// One planned Vulkan command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    Barrier,
    Fill {
        buffer: vk::Buffer,
        offset: u64,
        size: u64,
        data: u32,
    },
    /// A copy out of the upload buffer.
    Upload {
        from: u64,
        buffer: vk::Buffer,
        offset: u64,
        size: u64,
    },
    Copy {
        src: vk::Buffer,
        src_offset: u64,
        dst: vk::Buffer,
        dst_offset: u64,
        size: u64,
    },
    Dispatch(Box<DispatchStep>),
}

/// A planned dispatch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DispatchStep {
    /// The kernel's name (for profiles).
    pub(crate) kernel: &'static str,
    pub(crate) pipeline: vk::Pipeline,
    pub(crate) descriptors: [(vk::Buffer, u64, u64); MAX_BINDINGS],
    pub(crate) push: [u32; 32],
    pub(crate) grid: Grid,
}

/// A loaded executable.
#[derive(Clone, Copy)]
pub(crate) struct ExecutableRec {
    /// Index of its pipeline in the shared list.
    pub(crate) pipeline: usize,
    /// The kernel: what checks its dispatches on the host, where its push block's parameters
    /// start and which grid it runs on; `None` for generic SPIR-V.
    pub(crate) kernel: Option<&'static ember_kernels_wgsl::SpirvKernel>,
}

/// One pipeline, shared by every executable loaded from the same code.
pub(crate) struct SharedPipeline {
    pub(crate) key: (usize, usize, String),
    pub(crate) pipeline: vk::Pipeline,
    pub(crate) refs: u32,
}

/// The layouts every pipeline uses, and the shared pipelines.
pub(crate) struct Pipelines {
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) shared: Vec<Option<SharedPipeline>>,
}

/// Device signals of one semaphore not yet known to have run, oldest first.
pub(crate) const TRACKED_SIGNALS: usize = 8;

/// What a host wait on one semaphore must wait for on the device.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DeviceSignal {
    /// A value the device has certainly reached (all of whose work has run).
    pub(crate) settled: u64,
    /// `(value, progress)`: the value submitted work signals, and the progress value after
    /// which it is reached on the device; both rise from one to the next. Past
    /// `TRACKED_SIGNALS` the oldest is dropped, and a wait for its value waits for the next
    /// one's progress (later, so still safe).
    pub(crate) pending: [(u64, u64); TRACKED_SIGNALS],
    pub(crate) len: u8,
}

/// Something freed once the device has passed the progress value it is kept with.
pub(crate) enum Retired {
    Buffer(BufferRec),
    Recording(Recording),
    Upload(InternalBuffer),
}

/// What sparse binding needs on one heap: the bind alignment and the chunk size it gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SparseHeap {
    pub(crate) alignment: u64,
    pub(crate) chunk_size: u64,
}
