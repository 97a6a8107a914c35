//! The local device: its tables, its memory, and buffers.

use crate::alloc::DeviceAllocator;
use crate::config::LocalConfig;
use crate::kernel::{Kernel, KernelFn};
use crate::memory::{Imported, RawSpan, Region};
use crate::replay::Replayers;
use hal_core::buffer::BufferKind;
use hal_core::chunk::ChunkLayout;
use hal_core::command::{Command, CommandBufferKind, CommandList};
use hal_core::device::{Mapped, MappingKind, ObjectCounts};
use hal_core::executable::ExecutableKind;
use hal_core::handle::{Handle, Kind, Table};
use hal_core::memory::alloc::{Arena, Range, RangeAllocator, Tlsf};
use hal_core::memory::{BufferParams, BufferUsage, MemoryAccess, MemoryHeap, MemoryType};
use hal_core::queue::Queue;
use hal_core::{Buffer, BufferInfo, BufferSpan, DeviceId, Error, HostMemory, MemoryDomain, WHOLE};

/// The slot pool's allocator counts in units of this many per slot, so its 16-unit granule
/// is one slot (a one-command buffer takes one slot, not sixteen).
pub(crate) const SLOT_UNIT: u64 = 16;

/// Every offset the device hands out is a multiple of this.
pub const MIN_ALIGNMENT: u64 = 16;

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

    /// Allocates a buffer of `size` bytes, from the transient arena when `transient` (falling
    /// back to the general heap when the arena is full).
    #[inline]
    pub(crate) fn allocate(
        &mut self,
        params: BufferParams,
        size: u64,
        transient: bool,
    ) -> Result<Buffer, Error> {
        let heap = self.heaps[0];
        let alignment = heap.check(&params)?;
        if alignment > self.region_alignment {
            return Err(Error::Unsupported(
                "alignment above the alignment of the device's memory region",
            ));
        }
        if size == 0 {
            return Err(Error::InvalidArgument("buffer size of zero"));
        }
        if size > heap.size {
            return Err(Error::Alloc(
                hal_core::memory::alloc::AllocError::TooLarge {
                    size,
                    capacity: heap.size,
                },
            ));
        }
        if size > heap.max_allocation_size || alignment > heap.max_allocation_size {
            return self.allocate_chunked(params, size, alignment, transient);
        }
        // One chunk (the common case), kept in the buffer's record. The record is built from
        // values in registers and stored field by field into the table: assembled on the
        // stack (as when both paths met here), it was copied in wide, misaligned moves that
        // stalled on the narrower stores that had just built it, and `release` stalled
        // again reading it back.
        let first = self.allocate_chunk(size, alignment, transient)?;
        self.insert_buffer(params, size, size, first)
    }

    /// Records a device buffer whose first chunk is `first`; gives its chunks back if the
    /// table is full.
    #[inline]
    fn insert_buffer(
        &mut self,
        params: BufferParams,
        size: u64,
        chunk_size: u64,
        first: ChunkRec,
    ) -> Result<Buffer, Error> {
        let info = BufferInfo {
            size,
            memory_type: self.heaps[0].types,
            usage: params.usage,
            access: params.access,
            chunk_size,
            imported: false,
        };
        let rec = BufferRec {
            info,
            backing: Backing::Device(first),
        };
        self.buffers
            .insert(rec)
            .inspect_err(|_| self.free_chunks(first))
    }

    /// [`allocate`](Self::allocate) for a buffer of several chunks (or one the chunk layout
    /// refuses), out of line.
    #[inline(never)]
    fn allocate_chunked(
        &mut self,
        params: BufferParams,
        size: u64,
        alignment: u64,
        transient: bool,
    ) -> Result<Buffer, Error> {
        let layout = ChunkLayout::new(size, self.heaps[0].max_allocation_size, alignment)?;
        let first = self.allocate_chunks(layout, alignment, transient)?;
        self.insert_buffer(params, size, layout.chunk_size(), first)
    }

    /// The chunks of a buffer `layout` cuts into several, linked in order: the first (to be
    /// kept in the buffer's record) and the rest in the chunk table.
    #[inline(never)]
    fn allocate_chunks(
        &mut self,
        layout: ChunkLayout,
        alignment: u64,
        transient: bool,
    ) -> Result<ChunkRec, Error> {
        let mut first = self.allocate_chunk(layout.chunk_len(0), alignment, transient)?;
        let mut tail: Option<Handle<ChunkKind>> = None;
        for index in 1..layout.count() {
            let linked = self
                .allocate_chunk(layout.chunk_len(index), alignment, transient)
                .and_then(|chunk| {
                    self.chunks.insert(chunk).inspect_err(|_| {
                        let _ = self.release_range(chunk.range, chunk.origin);
                    })
                });
            let handle = match linked {
                Ok(handle) => handle,
                Err(e) => {
                    self.free_chunks(first);
                    return Err(e);
                }
            };
            match tail.and_then(|t| self.chunks.get_mut(t).ok()) {
                Some(prev) => prev.next = Some(handle),
                None => first.next = Some(handle),
            }
            tail = Some(handle);
        }
        Ok(first)
    }

    /// Always inlined, so a queue-ordered allocation's bump from the transient arena stays
    /// in registers; the general allocator (TLSF by default: large once inlined) is called.
    #[inline(always)]
    fn allocate_chunk(
        &mut self,
        len: u64,
        alignment: u64,
        transient: bool,
    ) -> Result<ChunkRec, Error> {
        let (range, origin, offset) = match self.transient_allocate(len, alignment, transient) {
            Some(range) => (range, Origin::Transient, self.transient_base + range.offset),
            None => {
                let range = self.general_allocate(len, alignment)?;
                (range, Origin::General, range.offset)
            }
        };
        Ok(ChunkRec {
            offset,
            range,
            origin,
            next: None,
        })
    }

    /// A range from the general allocator.
    #[inline(never)]
    fn general_allocate(&mut self, len: u64, alignment: u64) -> Result<Range, Error> {
        Ok(self.general.allocate(len, alignment)?)
    }

    #[inline(always)]
    fn transient_allocate(&mut self, len: u64, alignment: u64, transient: bool) -> Option<Range> {
        if !transient || self.transient.capacity() == 0 {
            return None;
        }
        self.transient.allocate(len, alignment).ok()
    }

    #[inline(always)]
    fn release_range(&mut self, range: Range, origin: Origin) -> Result<(), Error> {
        match origin {
            Origin::General => self.general_free(range.offset, range.size, range.token()),
            Origin::Transient => Ok(self.transient.free(range)?),
        }
    }

    /// Gives a range back to the general allocator (called, like
    /// [`general_allocate`](Self::general_allocate)). The range comes in its parts, in
    /// registers: as one value it was copied through the stack in wide loads that straddle
    /// the narrower stores that had just written the buffer's record.
    #[inline(never)]
    fn general_free(&mut self, offset: u64, size: u64, token: u64) -> Result<(), Error> {
        Ok(self.general.free(Range::new(offset, size, token))?)
    }

    /// Frees a buffer's chunks: `first` (in its record) and the list that follows it.
    #[inline]
    pub(crate) fn free_chunks(&mut self, first: ChunkRec) {
        let range = first.range;
        self.free_chunk_parts(
            range.offset,
            range.size,
            range.token(),
            first.origin,
            first.next,
        );
    }

    /// [`free_chunks`](Self::free_chunks) with the first chunk's range in its parts.
    #[inline(never)]
    fn free_chunk_parts(
        &mut self,
        offset: u64,
        size: u64,
        token: u64,
        origin: Origin,
        mut next: Option<Handle<ChunkKind>>,
    ) {
        let _ = self.release_range(Range::new(offset, size, token), origin);
        while let Some(handle) = next {
            match self.chunks.remove(handle) {
                Ok(chunk) => {
                    let _ = self.release_range(chunk.range, chunk.origin);
                    next = chunk.next;
                }
                Err(_) => break,
            }
        }
    }

    pub(crate) fn import(
        &mut self,
        memory: HostMemory<'m>,
        params: BufferParams,
    ) -> Result<Buffer, Error> {
        let heap = self.heaps[0];
        heap.check(&params)?;
        let (imported, access) = match memory {
            HostMemory::ReadWrite(bytes) => (Imported::read_write(bytes), params.access),
            HostMemory::ReadOnly(bytes) => (
                Imported::read_only(bytes),
                params
                    .access
                    .difference(MemoryAccess::WRITE | MemoryAccess::DISCARD),
            ),
        };
        // A power of two (or 0, taken as 1): `heap.check` refused any other.
        let alignment = params.min_alignment.max(1);
        if imported.addr() as u64 & (alignment - 1) != 0 {
            return Err(Error::InvalidArgument(
                "imported memory is not aligned as the parameters ask",
            ));
        }
        let size = imported.len() as u64;
        let info = BufferInfo {
            size,
            memory_type: heap.types,
            usage: params.usage,
            access,
            chunk_size: size.max(1),
            imported: true,
        };
        self.buffers.insert(BufferRec {
            info,
            backing: Backing::Imported(imported),
        })
    }

    /// Releases a buffer: its memory, and any persistent mapping of it.
    #[inline]
    pub(crate) fn release(&mut self, buffer: Buffer) -> Result<(), Error> {
        // Only the first chunk's parts are read out of the record, field by field, and passed
        // on in registers: moving the record (or its first chunk) out as one value copied it
        // through the stack in wide loads that straddle the narrower stores `allocate` had
        // just made, and stalled on them.
        let first = match &self.buffers.get(buffer)?.backing {
            Backing::Device(first) => Some((first.range, first.origin, first.next)),
            Backing::Imported(_) => None,
        };
        self.buffers.remove(buffer)?;
        self.mappings.retain(|m| m.span.buffer != buffer);
        if let Some((range, origin, next)) = first {
            self.free_chunk_parts(range.offset, range.size, range.token(), origin, next);
        }
        Ok(())
    }

    /// The memory of `offset..offset + length` of a buffer, which must lie in one chunk.
    #[inline]
    pub(crate) fn raw(
        &self,
        buffer: Buffer,
        what: &'static str,
        offset: u64,
        length: u64,
    ) -> Result<(RawSpan, BufferInfo), Error> {
        let rec = self.buffers.get(buffer)?;
        let length = rec.info.resolve(what, offset, length)?;
        let span = match rec.backing {
            _ if length == 0 => self.region.span(0, 0, false),
            Backing::Imported(imported) => imported.span(offset, length),
            Backing::Device(first) if rec.info.chunk_size >= rec.info.size => {
                self.region.span(first.offset + offset, length, true)
            }
            Backing::Device(first) => {
                let layout = ChunkLayout::of(rec.info.size, rec.info.chunk_size);
                let segment = layout.within_one_chunk(offset, length)?;
                let chunk = self.nth_chunk(first, segment.chunk)?;
                self.region
                    .span(chunk.offset + segment.chunk_offset, length, true)
            }
        };
        let span = span.ok_or(Error::OutOfRange {
            what,
            offset,
            length,
            size: rec.info.size,
        })?;
        Ok((span, rec.info))
    }

    fn nth_chunk(&self, first: ChunkRec, n: u64) -> Result<ChunkRec, Error> {
        let mut chunk = first;
        for _ in 0..n {
            let next = chunk
                .next
                .ok_or(Error::Internal("chunk list shorter than the buffer"))?;
            chunk = *self.chunks.get(next)?;
        }
        Ok(chunk)
    }

    /// Calls `f` for each per-chunk piece of a range: (memory, offset in the range).
    ///
    /// `f` is a trait object so that one copy of the piece walk serves every caller (fills,
    /// copies, reads, writes): as a generic it was duplicated into each, on firmware too.
    pub(crate) fn for_each_piece(
        &self,
        span: BufferSpan,
        what: &'static str,
        f: &mut dyn FnMut(RawSpan, u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let info = self.buffers.get(span.buffer)?.info;
        let length = info.resolve(what, span.offset, span.length)?;
        let layout = ChunkLayout::of(info.size, info.chunk_size);
        for piece in layout.segments(span.offset, length) {
            let (raw, _) = self.raw(
                span.buffer,
                what,
                span.offset + piece.range_offset,
                piece.length,
            )?;
            f(raw, piece.range_offset)?;
        }
        Ok(())
    }

    /// Copies `length` bytes between two ranges of any chunking.
    pub(crate) fn copy_spans(
        &self,
        source: BufferSpan,
        target: BufferSpan,
        length: u64,
    ) -> Result<(), Error> {
        let source = BufferSpan::new(source.buffer, source.offset, length);
        self.for_each_piece(source, "copy source", &mut |from, at| {
            let to = BufferSpan::new(target.buffer, target.offset + at, from.len() as u64);
            self.for_each_piece(to, "copy target", &mut |into, inner| {
                // SAFETY: device methods hold no slice of device memory across this call,
                // and the caller of `copy_spans` holds the device borrow (module docs).
                if unsafe { into.copy_from(0, &from, inner as usize, into.len()) } {
                    Ok(())
                } else {
                    Err(read_only())
                }
            })
        })
    }

    /// Fills a range with a 1-, 2- or 4-byte pattern.
    pub(crate) fn fill_span(&self, target: BufferSpan, pattern: &[u8]) -> Result<(), Error> {
        if !matches!(pattern.len(), 1 | 2 | 4) {
            return Err(Error::InvalidArgument(
                "fill pattern must be 1, 2 or 4 bytes",
            ));
        }
        // 1, 2 or 4: a multiple of it has none of the bits of `n - 1`.
        let n = pattern.len() as u64;
        let mask = n - 1;
        if target.offset & mask != 0 || (target.length != WHOLE && target.length & mask != 0) {
            return Err(Error::InvalidArgument(
                "fill offset and length must be multiples of the pattern size",
            ));
        }
        self.for_each_piece(target, "fill", &mut |raw, at| {
            // SAFETY: the only view of these bytes, dropped before the next piece; callers
            // of `fill_span` hold the device borrow.
            let bytes = unsafe { raw.bytes_mut() }.ok_or_else(read_only)?;
            // The pattern, rotated to where this piece starts in it, repeated.
            let phase = (at & mask) as usize;
            let mut rotated = [0u8; 4];
            for (i, r) in rotated[..pattern.len()].iter_mut().enumerate() {
                *r = pattern[(phase + i) % pattern.len()];
            }
            // One pattern, then the filled prefix copied onto itself, doubling: O(log n)
            // copies, and every prefix length stays a multiple of the pattern.
            let first = pattern.len().min(bytes.len());
            bytes[..first].copy_from_slice(&rotated[..first]);
            let mut filled = first;
            while filled < bytes.len() {
                let n = filled.min(bytes.len() - filled);
                // Disjoint halves: a plain copy (no `memmove` linked for this).
                let (done, rest) = bytes.split_at_mut(filled);
                rest[..n].copy_from_slice(&done[..n]);
                filled += n;
            }
            Ok(())
        })
    }
}

pub(crate) fn read_only() -> Error {
    Error::Access {
        needed: MemoryAccess::WRITE.bits(),
        allowed: MemoryAccess::READ.bits(),
    }
}

/// A scoped mapping of local memory.
pub struct LocalMapping<'a> {
    bytes: MappedBytes<'a>,
}

enum MappedBytes<'a> {
    Read(&'a [u8]),
    Write(&'a mut [u8]),
}

impl<'a> LocalMapping<'a> {
    ///
    /// # Safety
    /// `'a` is a `&mut` borrow of the device that made `raw` (so no other view exists).
    pub(crate) unsafe fn new(raw: RawSpan, access: MemoryAccess) -> Self {
        // SAFETY: the caller's `&mut` borrow of the device for 'a makes this the only view.
        let bytes = match unsafe { raw.bytes_mut() } {
            Some(b) if access.contains(MemoryAccess::WRITE) => MappedBytes::Write(b),
            // SAFETY: as above (a read-only view instead).
            _ => MappedBytes::Read(unsafe { raw.bytes() }),
        };
        Self { bytes }
    }
}

impl Mapped for LocalMapping<'_> {
    fn bytes(&self) -> &[u8] {
        match &self.bytes {
            MappedBytes::Read(b) => b,
            MappedBytes::Write(b) => b,
        }
    }

    fn bytes_mut(&mut self) -> Result<&mut [u8], Error> {
        match &mut self.bytes {
            MappedBytes::Write(b) => Ok(b),
            MappedBytes::Read(_) => Err(Error::Access {
                needed: MemoryAccess::WRITE.bits(),
                allowed: MemoryAccess::READ.bits(),
            }),
        }
    }
}
