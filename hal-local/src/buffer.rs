//! Buffers of the local device: allocation (chunked where larger than one allocation),
//! import of host memory, release, and access to their bytes piece by piece.

use crate::alloc::DeviceAllocator;
use crate::mapping::read_only;
use crate::memory::{Imported, RawSpan};
use crate::types::{Backing, BufferRec, ChunkKind, ChunkRec, LocalDevice, Origin};
use hal_core::chunk::ChunkLayout;
use hal_core::handle::Handle;
use hal_core::memory::alloc::{Range, RangeAllocator};
use hal_core::memory::{BufferParams, MemoryAccess};
use hal_core::{Buffer, BufferInfo, BufferSpan, Error, HostMemory, WHOLE};

impl<'m, A: DeviceAllocator> LocalDevice<'m, A> {
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
        if !transient || self.transient.capacity() == 0 || alignment > self.transient_alignment {
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

    /// The memory a dispatch binds (`span`, which must lie in one chunk), checked for
    /// dispatch use, and whether the kernel may write it. The buffer's record is checked in
    /// place, not copied out.
    ///
    /// A buffer in one piece of device or imported memory is resolved here, in registers:
    /// a span returned through memory from the out-of-line [`raw_in`](Self::raw_in) is
    /// read back wider than it was written, a store-forwarding stall per binding.
    #[cfg(feature = "exclusive")]
    #[inline(always)]
    pub(crate) fn dispatch_raw(&self, span: BufferSpan) -> Result<(RawSpan, bool), Error> {
        let rec = self.buffers.get(span.buffer)?;
        let writable = rec.info.check_dispatch_binding()?;
        let length = rec
            .info
            .resolve("dispatch binding", span.offset, span.length)?;
        let raw = match &rec.backing {
            _ if length == 0 => None,
            Backing::Imported(imported) => imported.span(span.offset, length),
            Backing::Device(first) if rec.info.chunk_size >= rec.info.size => {
                self.region.span(first.offset + span.offset, length, true)
            }
            Backing::Device(_) => None,
        };
        if let Some(raw) = raw {
            return Ok((raw, writable));
        }
        let raw = self.raw_in(rec, "dispatch binding", span.offset, span.length)?;
        Ok((raw, writable))
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
        Ok((self.raw_in(rec, what, offset, length)?, rec.info))
    }

    /// [`raw`](Self::raw) of a buffer whose record the caller holds.
    #[inline]
    fn raw_in(
        &self,
        rec: &BufferRec,
        what: &'static str,
        offset: u64,
        length: u64,
    ) -> Result<RawSpan, Error> {
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
        span.ok_or(Error::OutOfRange {
            what,
            offset,
            length,
            size: rec.info.size,
        })
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
