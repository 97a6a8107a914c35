//! Command buffers: a compact, validated list of commands recorded once and replayed.
//!
//! Callers record [`Record`]s; [`CommandList::record`] validates each one against the buffers
//! it names (usage, access, bounds, limits) and stores it as one or more fixed-size
//! [`Command`] slots in storage the driver owns. Drivers replay the list with
//! [`CommandList::ops`]: the local driver executes it, the Vulkan driver translates it.
//!
//! A reusable command buffer may refer to binding-table *slots* instead of buffers
//! ([`BufferRef::slot`]); the buffers are bound when it is submitted, so one recording serves
//! every invocation.

use crate::buffer::{Buffer, BufferInfo, BufferKind, BufferSpan, WHOLE};
use crate::executable::Executable;
use crate::handle::{Handle, Kind, Table, TableView};
use crate::memory::{BufferUsage, MemoryAccess};
use crate::Error;

/// Marker for command buffer handles.
pub enum CommandBufferKind {}
impl Kind for CommandBufferKind {
    const NAME: &'static str = "command buffer";
}

/// A command buffer.
pub type CommandBuffer = Handle<CommandBufferKind>;

/// Most bindings one dispatch may have.
pub const MAX_BINDINGS: usize = 16;
/// Most push constants (32-bit words) one dispatch may have.
pub const MAX_CONSTANTS: usize = 64;
/// Most bytes one update command may carry.
pub const MAX_UPDATE_BYTES: usize = 64 * 1024;
/// Most binding-table slots a command buffer may refer to.
pub const MAX_BINDING_SLOTS: u16 = 64;

/// Most workgroups along each dimension of one dispatch (Vulkan's guaranteed minimum of
/// `maxComputeWorkGroupCount`), so a grid's total always fits a `u64`.
pub const MAX_WORKGROUP_COUNT: u32 = 65_535;

/// Push constants each [`Command::Constants`] slot carries: sixteen fit in the room the
/// largest command (a copy) takes anyway, so most kernels' constants are read in place.
pub const CONSTANTS_PER_SLOT: usize = 16;

/// Bindings each [`Command::Bindings`] slot carries: two fit in the room a copy takes, so a
/// dispatch's bindings take half the slots (command slots are most of a small device's
/// tables).
pub const BINDINGS_PER_SLOT: usize = 2;

/// Slots one dispatch takes in a command list: its command, its bindings
/// ([`BINDINGS_PER_SLOT`] a slot) and its push constants ([`CONSTANTS_PER_SLOT`] a slot).
pub const fn dispatch_slots(bindings: usize, constants: usize) -> usize {
    1 + bindings.div_ceil(BINDINGS_PER_SLOT) + constants.div_ceil(CONSTANTS_PER_SLOT)
}

/// Bytes of update data each [`Command::Data`] slot carries.
pub const DATA_SLOT_BYTES: usize = 32;

/// How a command buffer may be submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CommandBufferMode {
    /// Submitted once, then it can only be released.
    OneShot,
    /// Submitted any number of times, each time with its own binding table.
    Reusable,
}

/// Where a command's buffer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RefTarget {
    /// A buffer named when recording.
    Buffer(Buffer),
    /// Entry `n` of the binding table given at submit.
    Slot(u16),
}

/// A range of a buffer, or of a binding-table slot, that a command uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferRef {
    /// The buffer or slot.
    pub target: RefTarget,
    /// Start, relative to the buffer (or to the span bound to the slot).
    pub offset: u64,
    /// Length in bytes ([`WHOLE`] = to the end).
    pub length: u64,
}

impl BufferRef {
    /// A span of a buffer.
    pub const fn span(span: BufferSpan) -> Self {
        Self {
            target: RefTarget::Buffer(span.buffer),
            offset: span.offset,
            length: span.length,
        }
    }

    /// A whole buffer.
    pub const fn buffer(buffer: Buffer) -> Self {
        Self::span(BufferSpan::whole(buffer))
    }

    /// The whole span bound to binding-table slot `slot`.
    pub const fn slot(slot: u16) -> Self {
        Self {
            target: RefTarget::Slot(slot),
            offset: 0,
            length: WHOLE,
        }
    }

    /// `length` bytes at `offset` of what this refers to.
    pub const fn at(mut self, offset: u64, length: u64) -> Self {
        self.offset = offset;
        self.length = length;
        self
    }

    /// The buffer span this refers to, given the binding table of the submission.
    #[inline]
    pub fn resolve(&self, table: &[BufferSpan]) -> Result<BufferSpan, Error> {
        match self.target {
            RefTarget::Buffer(buffer) => Ok(BufferSpan::new(buffer, self.offset, self.length)),
            RefTarget::Slot(slot) => table
                .get(slot as usize)
                .ok_or(Error::BindingSlot {
                    slot: slot.into(),
                    bound: table.len() as u32,
                })?
                .subspan(self.offset, self.length),
        }
    }

    /// [`resolve`](Self::resolve), then, for a binding-table slot, the bound buffer checked
    /// for `usage` and `access` (a buffer named when recording was checked then; `info`
    /// looks a buffer up, so a released one is refused either way).
    #[inline]
    pub fn resolve_checked(
        &self,
        table: &[BufferSpan],
        info: impl FnOnce(Buffer) -> Result<BufferInfo, Error>,
        what: &'static str,
        usage: BufferUsage,
        access: MemoryAccess,
    ) -> Result<BufferSpan, Error> {
        let span = self.resolve(table)?;
        let info = info(span.buffer)?;
        if let RefTarget::Slot(_) = self.target {
            info.require_usage(what, usage)?;
            info.require_access(access)?;
        }
        Ok(span)
    }

    /// [`resolve_checked`](Self::resolve_checked) with the buffer looked up in `buffers` (a
    /// driver's buffer table): how a driver resolves a transfer command's reference when it
    /// runs.
    #[inline]
    pub fn resolve_in(
        &self,
        table: &[BufferSpan],
        buffers: &(impl BufferLookup + ?Sized),
        what: &'static str,
        usage: BufferUsage,
        access: MemoryAccess,
    ) -> Result<BufferSpan, Error> {
        self.resolve_checked(table, |b| buffers.buffer_info(b), what, usage, access)
    }
}

/// How many workgroups a dispatch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Workgroups {
    /// A fixed grid.
    Direct([u32; 3]),
    /// Three `u32`s read from a buffer when the dispatch runs.
    Indirect(BufferRef),
}

/// One command, as a caller records it.
#[derive(Debug, Clone, Copy)]
pub enum Record<'a> {
    /// Fills `target` with a 1-, 2- or 4-byte pattern.
    Fill {
        /// What to fill; offset and length must be multiples of the pattern's size.
        target: BufferRef,
        /// The pattern.
        pattern: &'a [u8],
    },
    /// Copies `data` (at most [`MAX_UPDATE_BYTES`]) into `target`; the data is kept in the
    /// command buffer.
    Update {
        /// Where to write; its length is `data.len()`.
        target: BufferRef,
        /// The bytes.
        data: &'a [u8],
    },
    /// Copies `length` bytes between two ranges that must not overlap.
    Copy {
        /// Source.
        source: BufferRef,
        /// Target.
        target: BufferRef,
        /// Bytes to copy.
        length: u64,
    },
    /// Runs an executable over a grid of workgroups.
    Dispatch {
        /// The kernel.
        executable: Executable,
        /// The grid (or where to read it).
        workgroups: Workgroups,
        /// Push constants.
        constants: &'a [u32],
        /// Buffers the kernel sees, in order.
        bindings: &'a [BufferRef],
    },
    /// Every earlier command completes before any later one starts.
    Barrier,
}

/// One stored slot of a command list. Multi-slot commands are followed by their payload
/// slots ([`Command::Bindings`], [`Command::Constants`], [`Command::Data`]).
///
/// `repr(u8)` with [`Command::Barrier`] first: its tag is 0, so [`Command::EMPTY`] slots are
/// all zero bytes and a `static` device's slot array is in `.bss`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum Command {
    /// A barrier.
    Barrier,
    /// A fill.
    Fill {
        /// Target.
        target: BufferRef,
        /// Pattern bytes (the first `pattern_len` count).
        pattern: [u8; 4],
        /// 1, 2 or 4.
        pattern_len: u8,
    },
    /// An update; followed by `target.length` bytes in [`Command::Data`] slots.
    Update {
        /// Target (length = data length).
        target: BufferRef,
    },
    /// A copy.
    Copy {
        /// Source.
        source: BufferRef,
        /// Target.
        target: BufferRef,
        /// Bytes.
        length: u64,
    },
    /// A dispatch; followed by its bindings ([`BINDINGS_PER_SLOT`] per slot), then its
    /// constants ([`CONSTANTS_PER_SLOT`] per slot).
    Dispatch {
        /// Kernel.
        executable: Executable,
        /// Grid.
        workgroups: Workgroups,
        /// Number of bindings.
        bindings: u8,
        /// Number of push constants.
        constants: u8,
    },
    /// Payload: the next `count` (1 to [`BINDINGS_PER_SLOT`]) bindings of the preceding
    /// dispatch; `refs[count..]` are unused.
    Bindings {
        /// The bindings, in order.
        refs: [BufferRef; BINDINGS_PER_SLOT],
        /// How many of `refs` are bindings.
        count: u8,
    },
    /// Payload: up to [`CONSTANTS_PER_SLOT`] push constants of the preceding dispatch.
    Constants([u32; CONSTANTS_PER_SLOT]),
    /// Payload: update bytes.
    Data([u8; DATA_SLOT_BYTES]),
}

impl Command {
    /// An unused slot.
    pub const EMPTY: Command = Command::Barrier;
}

/// A command list's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ListState {
    /// Accepting commands.
    Recording,
    /// Ended; can be submitted.
    Executable,
    /// A one-shot buffer already submitted.
    Consumed,
}

/// The bookkeeping of one command buffer: where its slots are and what it may do. The slots
/// themselves live in storage the driver owns and passes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandList {
    mode: CommandBufferMode,
    state: ListState,
    binding_capacity: u16,
    len: u32,
    dispatches: u32,
    /// Parked queue operations that will still run it.
    pending_uses: u32,
    /// Released while uses were pending: it goes once the last one has run.
    release_when_idle: bool,
}

/// What a command list needs to know about a buffer while recording.
pub trait BufferLookup {
    /// The buffer's description, or [`Error::StaleHandle`].
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error>;
}

/// A driver's record of a buffer: whatever else it keeps, the buffer's [`BufferInfo`]. A
/// table of them is a [`BufferLookup`] (for [`CommandList::record`] and
/// [`BufferRef::resolve_in`]), so no driver writes one.
pub trait BufferRecord {
    /// The buffer's description.
    fn info(&self) -> &BufferInfo;
}

impl<R: BufferRecord> BufferLookup for TableView<BufferKind, R> {
    #[inline]
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error> {
        Ok(*self.get(buffer)?.info())
    }
}

impl<R: BufferRecord, const N: usize> BufferLookup for Table<BufferKind, R, N> {
    #[inline]
    fn buffer_info(&self, buffer: Buffer) -> Result<BufferInfo, Error> {
        (**self).buffer_info(buffer)
    }
}

impl CommandList {
    /// An empty list.
    pub fn new(mode: CommandBufferMode, binding_capacity: u16) -> Result<Self, Error> {
        if binding_capacity > MAX_BINDING_SLOTS {
            return Err(Error::Limit {
                what: "binding table capacity",
                requested: binding_capacity.into(),
                limit: MAX_BINDING_SLOTS.into(),
            });
        }
        Ok(Self {
            mode,
            state: ListState::Recording,
            binding_capacity,
            len: 0,
            dispatches: 0,
            pending_uses: 0,
            release_when_idle: false,
        })
    }

    /// Its mode.
    pub const fn mode(&self) -> CommandBufferMode {
        self.mode
    }

    /// Its state.
    pub const fn state(&self) -> ListState {
        self.state
    }

    /// Slots used.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether nothing was recorded.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Counts one more parked queue operation that will run it.
    pub fn add_pending_use(&mut self) {
        self.pending_uses += 1;
    }

    /// Counts a parked use done; `true` when it was released meanwhile and can go now.
    pub fn finish_pending_use(&mut self) -> bool {
        self.pending_uses = self.pending_uses.saturating_sub(1);
        self.pending_uses == 0 && self.release_when_idle
    }

    /// The caller releases it: `true` when it can go now, `false` when parked uses remain
    /// (it goes after the last).
    pub fn release(&mut self) -> bool {
        if self.pending_uses > 0 {
            self.release_when_idle = true;
            return false;
        }
        true
    }

    /// Dispatches recorded.
    pub const fn dispatches(&self) -> u32 {
        self.dispatches
    }

    /// Binding-table slots it may refer to.
    pub const fn binding_capacity(&self) -> u16 {
        self.binding_capacity
    }

    /// Checks a reference at record time: slots against the capacity; buffers for usage,
    /// access and bounds. Returns it with a known length where the buffer is known.
    fn check_ref(
        &self,
        lookup: &(impl BufferLookup + ?Sized),
        r: BufferRef,
        what: &'static str,
        usage: BufferUsage,
        access: MemoryAccess,
    ) -> Result<BufferRef, Error> {
        match r.target {
            RefTarget::Slot(slot) if slot >= self.binding_capacity => Err(Error::BindingSlot {
                slot: slot.into(),
                bound: self.binding_capacity.into(),
            }),
            RefTarget::Slot(_) => Ok(r),
            RefTarget::Buffer(buffer) => {
                let info = lookup.buffer_info(buffer)?;
                info.require_usage(what, usage)?;
                info.require_access(access)?;
                let length = info.resolve(what, r.offset, r.length)?;
                Ok(r.at(r.offset, length))
            }
        }
    }

    /// Validates `record` and appends it to `slots` (this list's storage; `slots.len()` is its
    /// capacity). On error nothing is appended and the list stays usable.
    pub fn record(
        &mut self,
        slots: &mut [Command],
        lookup: &(impl BufferLookup + ?Sized),
        record: Record<'_>,
    ) -> Result<(), Error> {
        if self.state != ListState::Recording {
            return Err(Error::CommandBufferState(
                "recording into a command buffer that ended",
            ));
        }
        let start = self.len as usize;
        let capacity = slots.len();
        let free = capacity.saturating_sub(start);
        let need = |n: usize| {
            if n > free {
                Err(Error::Limit {
                    what: "command buffer slots",
                    requested: (start + n) as u64,
                    limit: capacity as u64,
                })
            } else {
                Ok(())
            }
        };
        let out = slots.get_mut(start..).unwrap_or(&mut []);
        let used = match record {
            Record::Barrier => {
                need(1)?;
                out[0] = Command::Barrier;
                1
            }
            Record::Fill { target, pattern } => {
                let pattern_len = pattern.len();
                if !matches!(pattern_len, 1 | 2 | 4) {
                    return Err(Error::InvalidArgument(
                        "fill pattern must be 1, 2 or 4 bytes",
                    ));
                }
                let target = self.check_ref(
                    lookup,
                    target,
                    "fill",
                    BufferUsage::TRANSFER_TARGET,
                    MemoryAccess::WRITE,
                )?;
                check_pattern_alignment(target, pattern_len as u64)?;
                need(1)?;
                let mut bytes = [0; 4];
                bytes[..pattern_len].copy_from_slice(pattern);
                out[0] = Command::Fill {
                    target,
                    pattern: bytes,
                    pattern_len: pattern_len as u8,
                };
                1
            }
            Record::Update { target, data } => {
                if data.len() > MAX_UPDATE_BYTES {
                    return Err(Error::Limit {
                        what: "update bytes",
                        requested: data.len() as u64,
                        limit: MAX_UPDATE_BYTES as u64,
                    });
                }
                let len = data.len() as u64;
                let target = self.check_ref(
                    lookup,
                    bounded(target, len, "update")?,
                    "update",
                    BufferUsage::TRANSFER_TARGET,
                    MemoryAccess::WRITE,
                )?;
                let data_slots = data.len().div_ceil(DATA_SLOT_BYTES);
                need(1 + data_slots)?;
                out[0] = Command::Update { target };
                for (slot, bytes) in out[1..].iter_mut().zip(data.chunks(DATA_SLOT_BYTES)) {
                    let mut chunk = [0; DATA_SLOT_BYTES];
                    chunk[..bytes.len()].copy_from_slice(bytes);
                    *slot = Command::Data(chunk);
                }
                1 + data_slots
            }
            Record::Copy {
                source,
                target,
                length,
            } => {
                if length == WHOLE {
                    return Err(Error::InvalidArgument("copy needs an explicit length"));
                }
                let source = self.check_ref(
                    lookup,
                    bounded(source, length, "copy source")?,
                    "copy source",
                    BufferUsage::TRANSFER_SOURCE,
                    MemoryAccess::READ,
                )?;
                let target = self.check_ref(
                    lookup,
                    bounded(target, length, "copy target")?,
                    "copy target",
                    BufferUsage::TRANSFER_TARGET,
                    MemoryAccess::WRITE,
                )?;
                if source.target == target.target
                    && ranges_overlap(source.offset, target.offset, length)
                {
                    return Err(Error::InvalidArgument("copy source and target overlap"));
                }
                need(1)?;
                out[0] = Command::Copy {
                    source,
                    target,
                    length,
                };
                1
            }
            Record::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
            } => {
                if bindings.len() > MAX_BINDINGS {
                    return Err(Error::Limit {
                        what: "dispatch bindings",
                        requested: bindings.len() as u64,
                        limit: MAX_BINDINGS as u64,
                    });
                }
                if constants.len() > MAX_CONSTANTS {
                    return Err(Error::Limit {
                        what: "push constants",
                        requested: constants.len() as u64,
                        limit: MAX_CONSTANTS as u64,
                    });
                }
                let workgroups = match workgroups {
                    Workgroups::Direct(count) => {
                        if count.contains(&0) {
                            return Err(Error::InvalidArgument("workgroup count of zero"));
                        }
                        if let Some(&big) = count.iter().find(|&&c| c > MAX_WORKGROUP_COUNT) {
                            return Err(Error::Limit {
                                what: "workgroups along one dimension",
                                requested: big.into(),
                                limit: MAX_WORKGROUP_COUNT.into(),
                            });
                        }
                        Workgroups::Direct(count)
                    }
                    Workgroups::Indirect(params) => {
                        if params.offset % 4 != 0 {
                            return Err(Error::InvalidArgument(
                                "indirect parameters must be 4-byte aligned",
                            ));
                        }
                        Workgroups::Indirect(self.check_ref(
                            lookup,
                            params.at(params.offset, 12),
                            "indirect dispatch parameters",
                            BufferUsage::DISPATCH_INDIRECT_PARAMS,
                            MemoryAccess::READ,
                        )?)
                    }
                };
                let mut checked = [BufferRef::slot(0); MAX_BINDINGS];
                for (c, b) in checked.iter_mut().zip(bindings) {
                    *c = self.check_ref(
                        lookup,
                        *b,
                        "dispatch binding",
                        BufferUsage::DISPATCH_STORAGE_READ,
                        MemoryAccess::READ,
                    )?;
                }
                need(dispatch_slots(bindings.len(), constants.len()))?;
                out[0] = Command::Dispatch {
                    executable,
                    workgroups,
                    bindings: bindings.len() as u8,
                    constants: constants.len() as u8,
                };
                let mut at = 1;
                for chunk in checked[..bindings.len()].chunks(BINDINGS_PER_SLOT) {
                    let mut refs = [BufferRef::slot(0); BINDINGS_PER_SLOT];
                    refs[..chunk.len()].copy_from_slice(chunk);
                    out[at] = Command::Bindings {
                        refs,
                        count: chunk.len() as u8,
                    };
                    at += 1;
                }
                for chunk in constants.chunks(CONSTANTS_PER_SLOT) {
                    let mut words = [0; CONSTANTS_PER_SLOT];
                    words[..chunk.len()].copy_from_slice(chunk);
                    out[at] = Command::Constants(words);
                    at += 1;
                }
                self.dispatches += 1;
                at
            }
        };
        self.len += used as u32;
        Ok(())
    }

    /// Ends recording; the list can now be submitted.
    pub fn end(&mut self) -> Result<(), Error> {
        if self.state != ListState::Recording {
            return Err(Error::CommandBufferState("ended twice"));
        }
        self.state = ListState::Executable;
        Ok(())
    }

    /// Checks the list may be submitted with a binding table of `bound` entries, and marks a
    /// one-shot list consumed.
    pub fn begin_submit(&mut self, bound: usize) -> Result<(), Error> {
        match self.state {
            ListState::Recording => {
                return Err(Error::CommandBufferState("submitted before end()"))
            }
            ListState::Consumed => {
                return Err(Error::CommandBufferState("one-shot buffer submitted twice"))
            }
            ListState::Executable => {}
        }
        if bound < self.binding_capacity as usize {
            return Err(Error::BindingSlot {
                slot: bound as u32,
                bound: bound as u32,
            });
        }
        if self.mode == CommandBufferMode::OneShot {
            self.state = ListState::Consumed;
        }
        Ok(())
    }

    /// The recorded commands, decoded, from this list's slots.
    pub fn ops<'s>(&self, slots: &'s [Command]) -> Ops<'s> {
        Ops::new(slots.get(..self.len as usize).unwrap_or(&[]))
    }
}

/// The payload of a dispatch whose [`Command::Dispatch`] slot (with `bindings` bindings and
/// `constants` push constants) is followed by `rest`: its binding slots, its constant slots,
/// and the slots after them. A payload cut short by the end of `rest` is shortened.
///
/// What [`Ops`] decodes a dispatch with; a driver that walks the slots itself (to run
/// dispatches without going through [`Op`]) splits the payload the same way with it.
#[inline(always)]
pub fn dispatch_payload(
    rest: &[Command],
    bindings: u8,
    constants: u8,
) -> (&[Command], &[Command], &[Command]) {
    let b = (bindings as usize)
        .div_ceil(BINDINGS_PER_SLOT)
        .min(rest.len());
    let (binding_slots, rest) = rest.split_at(b);
    let c = (constants as usize)
        .div_ceil(CONSTANTS_PER_SLOT)
        .min(rest.len());
    let (constant_slots, rest) = rest.split_at(c);
    (binding_slots, constant_slots, rest)
}

/// The spans a dispatch binds, in order: each binding slot of its payload (`refs`, from
/// [`dispatch_payload`]) decoded and resolved against the submission's binding `table`.
/// The driver looks each buffer up and checks it with
/// [`BufferInfo::check_dispatch_binding`](crate::buffer::BufferInfo::check_dispatch_binding).
#[inline]
pub fn dispatch_spans<'a>(refs: &'a [Command], table: &'a [BufferSpan]) -> DispatchSpans<'a> {
    DispatchSpans {
        slots: refs.iter(),
        current: [].iter(),
        table,
    }
}

/// The iterator [`dispatch_spans`] returns: each binding of each slot, resolved in order; a
/// slot that is not a [`Command::Bindings`] yields one error.
#[derive(Debug, Clone)]
pub struct DispatchSpans<'a> {
    slots: core::slice::Iter<'a, Command>,
    current: core::slice::Iter<'a, BufferRef>,
    table: &'a [BufferSpan],
}

impl Iterator for DispatchSpans<'_> {
    type Item = Result<BufferSpan, Error>;

    /// Always inlined: it is the replay's per-binding step, and a size-optimized build would
    /// otherwise call it.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.current.next() {
                return Some(r.resolve(self.table));
            }
            match self.slots.next()? {
                Command::Bindings { refs, count } => {
                    let count = usize::from(*count).min(BINDINGS_PER_SLOT);
                    self.current = refs[..count].iter();
                }
                _ => return Some(Err(Error::Internal("dispatch payload is not a binding"))),
            }
        }
    }
}

/// Room for a dispatch's push constants when they span several slots.
#[derive(Debug)]
pub struct ConstantScratch {
    /// Filled only by a dispatch whose constants span several slots, so that the others
    /// never pay for clearing it.
    words: Option<[u32; MAX_CONSTANTS]>,
}

impl ConstantScratch {
    /// Empty room.
    #[inline]
    pub const fn new() -> Self {
        Self { words: None }
    }
}

impl Default for ConstantScratch {
    fn default() -> Self {
        Self::new()
    }
}

/// A dispatch's `count` push constants from its constant slots (from [`dispatch_payload`]):
/// read in place when they fit one slot, otherwise gathered into `scratch` (fewer if the
/// slots hold fewer).
#[inline]
pub fn dispatch_constants<'a>(
    slots: &'a [Command],
    count: u8,
    scratch: &'a mut ConstantScratch,
) -> &'a [u32] {
    match slots {
        [] => &[],
        [Command::Constants(words)] => words.get(..count as usize).unwrap_or(words),
        _ => {
            let words = scratch.words.insert([0; MAX_CONSTANTS]);
            let n = gather_constants(slots, count, words);
            &words[..n]
        }
    }
}

/// Copies the first `count` constants of several slots into `out`; returns how many the
/// slots held (at most `count` and `out.len()`). Out of line: most dispatches carry at
/// most sixteen. The count stays in a register (a length kept in memory and bumped per
/// word would make each copy wait on the last).
#[inline(never)]
fn gather_constants(slots: &[Command], count: u8, out: &mut [u32; MAX_CONSTANTS]) -> usize {
    let want = (count as usize).min(MAX_CONSTANTS);
    let mut n = 0;
    for slot in slots {
        if let Command::Constants(words) = slot {
            let take = (want - n).min(CONSTANTS_PER_SLOT);
            out[n..n + take].copy_from_slice(&words[..take]);
            n += take;
            if n == want {
                break;
            }
        }
    }
    n
}

/// `r` cut to `length` bytes; its own length, when given, must hold them.
fn bounded(r: BufferRef, length: u64, what: &'static str) -> Result<BufferRef, Error> {
    if r.length != WHOLE && length > r.length {
        return Err(Error::OutOfRange {
            what,
            offset: r.offset,
            length,
            size: r.length,
        });
    }
    Ok(r.at(r.offset, length))
}

fn ranges_overlap(a: u64, b: u64, length: u64) -> bool {
    a < b.saturating_add(length) && b < a.saturating_add(length)
}

/// `pattern_len` is 1, 2 or 4: a multiple of it has none of the bits of `pattern_len - 1`.
fn check_pattern_alignment(target: BufferRef, pattern_len: u64) -> Result<(), Error> {
    let mask = pattern_len - 1;
    let length_ok = target.length == WHOLE || target.length & mask == 0;
    if target.offset & mask != 0 || !length_ok {
        return Err(Error::InvalidArgument(
            "fill offset and length must be multiples of the pattern size",
        ));
    }
    Ok(())
}

/// A decoded command, borrowed from the list's slots.
#[derive(Debug, Clone, Copy)]
pub enum Op<'s> {
    /// Fill `target` with the first `pattern_len` bytes of `pattern`.
    Fill {
        /// Target.
        target: BufferRef,
        /// Pattern.
        pattern: [u8; 4],
        /// Its length.
        pattern_len: u8,
    },
    /// Write the bytes of `data` into `target`.
    Update {
        /// Target.
        target: BufferRef,
        /// The bytes, [`DATA_SLOT_BYTES`] per slot.
        data: UpdateData<'s>,
    },
    /// Copy.
    Copy {
        /// Source.
        source: BufferRef,
        /// Target.
        target: BufferRef,
        /// Bytes.
        length: u64,
    },
    /// Dispatch.
    Dispatch {
        /// Kernel.
        executable: Executable,
        /// Grid.
        workgroups: Workgroups,
        /// The binding slots ([`Command::Bindings`] each).
        bindings: &'s [Command],
        /// The constant slots ([`Command::Constants`] each) and how many constants.
        constants: (&'s [Command], u8),
    },
    /// Barrier.
    Barrier,
}

/// The bytes of an update command.
#[derive(Debug, Clone, Copy)]
pub struct UpdateData<'s> {
    slots: &'s [Command],
    len: usize,
}

impl<'s> UpdateData<'s> {
    /// The bytes, as consecutive pieces of at most [`DATA_SLOT_BYTES`].
    pub fn pieces(&self) -> impl Iterator<Item = &'s [u8]> + 's {
        let len = self.len;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| match s {
                Command::Data(bytes) => {
                    let start = i * DATA_SLOT_BYTES;
                    let n = len.saturating_sub(start).min(DATA_SLOT_BYTES);
                    Some(&bytes[..n])
                }
                _ => None,
            })
    }
}

/// Iterator over a list's decoded commands.
#[derive(Debug, Clone)]
pub struct Ops<'s> {
    slots: &'s [Command],
}

impl<'s> Ops<'s> {
    /// Decodes `slots`, recorded commands (with their payload slots) from the first.
    pub const fn new(slots: &'s [Command]) -> Self {
        Self { slots }
    }

    /// The slots not decoded yet.
    pub const fn rest(&self) -> &'s [Command] {
        self.slots
    }
}

impl<'s> Iterator for Ops<'s> {
    type Item = Op<'s>;

    #[inline]
    fn next(&mut self) -> Option<Op<'s>> {
        let (first, rest) = self.slots.split_first()?;
        let (op, payload) = match *first {
            Command::Fill {
                target,
                pattern,
                pattern_len,
            } => (
                Op::Fill {
                    target,
                    pattern,
                    pattern_len,
                },
                0,
            ),
            Command::Update { target } => {
                let len = target.length as usize;
                let n = len.div_ceil(DATA_SLOT_BYTES).min(rest.len());
                (
                    Op::Update {
                        target,
                        data: UpdateData {
                            slots: &rest[..n],
                            len,
                        },
                    },
                    n,
                )
            }
            Command::Copy {
                source,
                target,
                length,
            } => (
                Op::Copy {
                    source,
                    target,
                    length,
                },
                0,
            ),
            Command::Dispatch {
                executable,
                workgroups,
                bindings,
                constants,
            } => {
                let (binding_slots, constant_slots, _) =
                    dispatch_payload(rest, bindings, constants);
                (
                    Op::Dispatch {
                        executable,
                        workgroups,
                        bindings: binding_slots,
                        constants: (constant_slots, constants),
                    },
                    binding_slots.len() + constant_slots.len(),
                )
            }
            // Payload slots are consumed with their command; a stray one is skipped.
            Command::Barrier
            | Command::Bindings { .. }
            | Command::Constants(_)
            | Command::Data(_) => (Op::Barrier, 0),
        };
        self.slots = &rest[payload..];
        Some(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;

    /// A binding table of `n` spans, span `i` at offset `i`.
    fn table(n: usize) -> [BufferSpan; 8] {
        core::array::from_fn(|i| {
            BufferSpan::new(
                Buffer::from_parts(i as u32, 0),
                i as u64,
                if i < n { 4 } else { 0 },
            )
        })
    }

    /// Bindings of slots `0..n`, packed as a recording packs them.
    fn packed(n: usize) -> ([Command; 8], usize) {
        let mut slots = [Command::EMPTY; 8];
        let refs: [BufferRef; 8] = core::array::from_fn(|i| BufferRef::slot(i as u16));
        let mut used = 0;
        for (slot, chunk) in slots.iter_mut().zip(refs[..n].chunks(BINDINGS_PER_SLOT)) {
            let mut packed = [BufferRef::slot(0); BINDINGS_PER_SLOT];
            packed[..chunk.len()].copy_from_slice(chunk);
            *slot = Command::Bindings {
                refs: packed,
                count: chunk.len() as u8,
            };
            used += 1;
        }
        (slots, used)
    }

    #[test]
    fn packed_bindings_come_back_in_order() {
        for n in 0..=7 {
            let (slots, used) = packed(n);
            assert_eq!(used, n.div_ceil(BINDINGS_PER_SLOT));
            assert_eq!(dispatch_slots(n, 0), 1 + used);
            let t = table(n);
            let got: heapless::Vec<BufferSpan, 8> = dispatch_spans(&slots[..used], &t)
                .map(|s| s.expect("resolves"))
                .collect();
            assert_eq!(got.as_slice(), &t[..n], "{n} bindings");
        }
    }

    #[test]
    fn counts_are_bounded_and_strays_are_errors() {
        let t = table(4);
        let over = Command::Bindings {
            refs: [BufferRef::slot(0), BufferRef::slot(1)],
            count: 9,
        };
        let empty = Command::Bindings {
            refs: [BufferRef::slot(2), BufferRef::slot(3)],
            count: 0,
        };
        let slots = [over, empty, Command::Constants([0; CONSTANTS_PER_SLOT])];
        let mut spans = dispatch_spans(&slots, &t);
        assert_eq!(spans.next(), Some(Ok(t[0])));
        assert_eq!(spans.next(), Some(Ok(t[1])));
        assert!(matches!(spans.next(), Some(Err(Error::Internal(_)))));
        assert_eq!(spans.next(), None);
    }

    #[test]
    fn two_bindings_fit_the_room_a_copy_takes() {
        let copy = size_of::<BufferRef>() * 2 + size_of::<u64>();
        // The pair and its count fit in a slot that a copy command makes no larger.
        assert!(size_of::<[BufferRef; BINDINGS_PER_SLOT]>() < size_of::<Command>());
        assert!(size_of::<Command>() <= copy + 8);
    }
}
