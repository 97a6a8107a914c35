//! Buffers: allocation, chunk placements, release, and the per-chunk pieces every command
//! and host transfer walks (the records are in `types`).

use crate::memory::Placement;
use crate::types::{Backing, BufferRec, Piece, Retired, VulkanDevice};
use ash::vk;
use hal_core::chunk::ChunkLayout;
use hal_core::memory::alloc::AllocError;
use hal_core::memory::{BufferParams, MemoryAccess};
use hal_core::{Buffer, BufferInfo, BufferSpan, Error};

impl<'m> VulkanDevice<'m> {
    /// Allocates a buffer of `size` bytes; chunked past the heap's largest allocation.
    pub(crate) fn allocate(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        match self.allocate_once(params, size) {
            // Memory that pending work still holds comes back once it has run.
            Err(Error::Alloc(AllocError::OutOfMemory { .. })) if !self.retired.is_empty() => {
                self.settle()?;
                self.allocate_once(params, size)
            }
            result => result,
        }
    }

    fn allocate_once(&mut self, params: BufferParams, size: u64) -> Result<Buffer, Error> {
        let (heap, alignment) = self.memory.candidates(&params)?;
        let heap_desc = self.memory.heaps[heap];
        if size == 0 {
            return Err(Error::InvalidArgument("buffer size of zero"));
        }
        if size > heap_desc.size {
            return Err(Error::Alloc(AllocError::TooLarge {
                size,
                capacity: heap_desc.size,
            }));
        }
        if self.buffers.len() >= self.buffers.capacity() {
            return Err(Error::TableFull {
                table: "buffer",
                capacity: self.buffers.capacity() as u32,
            });
        }
        let layout = ChunkLayout::new(size, heap_desc.max_allocation_size, alignment)?;
        let backing = if layout.count() > 1 {
            match self.sparse_alignment(heap, alignment) {
                Some(sparse_alignment) => self.allocate_sparse(heap, size, sparse_alignment)?,
                None => Backing::Chunks(self.allocate_chunks(heap, &layout, alignment)?),
            }
        } else {
            Backing::Chunks(self.allocate_chunks(heap, &layout, alignment)?)
        };
        let chunk_size = match &backing {
            Backing::Sparse { .. } => self.sparse_chunk_size(heap),
            _ => layout.chunk_size(),
        };
        let info = BufferInfo {
            size,
            memory_type: heap_desc.types,
            usage: params.usage,
            access: params.access,
            chunk_size,
            imported: false,
        };
        let rec = BufferRec {
            info,
            backing,
            host_visible: self.memory.pools[heap].host_visible,
            write_back: None,
        };
        self.insert_buffer(rec)
    }

    /// Stores a record; on a full table its memory goes back.
    pub(crate) fn insert_buffer(&mut self, rec: BufferRec) -> Result<Buffer, Error> {
        match self.buffers.insert(rec) {
            Ok(b) => Ok(b),
            Err(e) => Err(e),
        }
    }

    fn allocate_chunks(
        &mut self,
        heap: usize,
        layout: &ChunkLayout,
        alignment: u64,
    ) -> Result<Vec<Placement>, Error> {
        let mut chunks = Vec::with_capacity(layout.count() as usize);
        for index in 0..layout.count() {
            match self
                .memory
                .allocate(&self.ctx, heap, layout.chunk_len(index), alignment)
            {
                Ok(p) => chunks.push(p),
                Err(e) => {
                    for p in chunks {
                        self.memory.free(&self.ctx, p);
                    }
                    return Err(e);
                }
            }
        }
        Ok(chunks)
    }

    /// Frees what backs a buffer (its record is already out of the table).
    pub(crate) fn free_backing(&mut self, rec: BufferRec) {
        if let Some((ptr, len)) = rec.write_back {
            // Copying import: the host memory gets what the device made of it.
            if let Ok(pieces) = self.pieces_of(&rec, 0, rec.info.size, false) {
                for p in pieces {
                    if p.host.is_null() {
                        continue;
                    }
                    let n = (p.len as usize).min(len.saturating_sub(p.at as usize));
                    // SAFETY: `p.host` points at `p.len` mapped bytes of this buffer's memory;
                    // `ptr..ptr + len` is the caller's imported memory, borrowed for 'm and not
                    // otherwise referenced by the driver; the ranges do not overlap.
                    unsafe { core::ptr::copy_nonoverlapping(p.host, ptr.add(p.at as usize), n) };
                }
            }
        }
        // Kept recordings name Vulkan buffers and offsets: freeing a sub-allocation destroys
        // nothing they name (a plan that differs is caught by comparing plans); destroying a
        // buffer does (a block destroyed is counted by `Memory`).
        match rec.backing {
            Backing::Chunks(chunks) => {
                for p in chunks {
                    self.memory.free(&self.ctx, p);
                }
            }
            Backing::Sparse { buffer, chunks } => {
                crate::memory::destroy_buffer(&self.ctx, buffer);
                for p in chunks {
                    self.memory.free(&self.ctx, p);
                }
                self.object_generation += 1;
            }
            Backing::Host { buffer, memory, .. } => {
                crate::memory::destroy_buffer(&self.ctx, buffer);
                crate::memory::free_memory(&self.ctx, memory);
                self.object_generation += 1;
            }
        }
    }

    /// Releases a buffer and its persistent mappings.
    pub(crate) fn release(&mut self, buffer: Buffer) -> Result<(), Error> {
        let rec = self.buffers.remove(buffer)?;
        self.mappings.retain(|m| m.span.buffer != buffer);
        // A kept recording's table may name it: the next execution plans (and checks) again.
        self.memo_generation += 1;
        self.free_when_done(Retired::Buffer(rec));
        Ok(())
    }

    /// Chunk `index` of a buffer; `blocks` names a sparse buffer's chunks by the buffers of
    /// the blocks backing them instead of by the sparse buffer.
    fn chunk_piece(&self, rec: &BufferRec, index: u64, blocks: bool) -> Result<Piece, Error> {
        let missing = Error::Internal("chunk index past the buffer's chunks");
        match &rec.backing {
            Backing::Sparse { chunks, .. } if blocks => {
                let p = *chunks.get(index as usize).ok_or(missing)?;
                self.block_piece(p)
            }
            Backing::Chunks(chunks) => {
                let p = *chunks.get(index as usize).ok_or(missing)?;
                self.block_piece(p)
            }
            Backing::Sparse { buffer, chunks } => {
                let p = *chunks.get(index as usize).ok_or(missing)?;
                let block = self.memory.block(p)?;
                Ok(Piece {
                    buffer: *buffer,
                    offset: index * rec.info.chunk_size,
                    host: if block.mapped.is_null() {
                        core::ptr::null_mut()
                    } else {
                        // SAFETY: the range lies inside the mapped block.
                        unsafe { block.mapped.add(p.range.offset as usize) }
                    },
                    len: p.range.size,
                    at: 0,
                })
            }
            Backing::Host {
                buffer,
                offset,
                ptr,
                ..
            } => Ok(Piece {
                buffer: *buffer,
                offset: *offset,
                host: *ptr,
                len: rec.info.size,
                at: 0,
            }),
        }
    }

    /// A block allocation as a piece.
    fn block_piece(&self, p: Placement) -> Result<Piece, Error> {
        let block = self.memory.block(p)?;
        Ok(Piece {
            buffer: block.buffer,
            offset: p.range.offset,
            host: if block.mapped.is_null() {
                core::ptr::null_mut()
            } else {
                // SAFETY: the range lies inside the mapped block.
                unsafe { block.mapped.add(p.range.offset as usize) }
            },
            len: p.range.size,
            at: 0,
        })
    }

    /// The pieces of `offset..offset + length` of a buffer (already checked in range), in
    /// order; with `merge`, pieces contiguous in one `VkBuffer` (a sparse buffer's) become one
    /// (their host pointers are then only valid for the first chunk: device use only).
    pub(crate) fn pieces_of(
        &self,
        rec: &BufferRec,
        offset: u64,
        length: u64,
        merge: bool,
    ) -> Result<Vec<Piece>, Error> {
        let layout = ChunkLayout::of(rec.info.size, rec.info.chunk_size);
        let mut out: Vec<Piece> = Vec::new();
        // Unmerged walks (host transfers, copies within one buffer) name block buffers.
        let blocks = !merge;
        for segment in layout.segments(offset, length) {
            let chunk = self.chunk_piece(rec, segment.chunk, blocks)?;
            let piece = Piece {
                buffer: chunk.buffer,
                offset: chunk.offset + segment.chunk_offset,
                host: if chunk.host.is_null() {
                    chunk.host
                } else {
                    // SAFETY: the segment lies inside the chunk, which is mapped.
                    unsafe { chunk.host.add(segment.chunk_offset as usize) }
                },
                len: segment.length,
                at: segment.range_offset,
            };
            if merge {
                if let Some(last) = out.last_mut() {
                    if last.buffer == piece.buffer && last.offset + last.len == piece.offset {
                        last.len += piece.len;
                        continue;
                    }
                }
            }
            out.push(piece);
        }
        Ok(out)
    }

    /// The pieces of a span, checked against its buffer.
    pub(crate) fn pieces(
        &self,
        span: BufferSpan,
        what: &'static str,
        merge: bool,
    ) -> Result<Vec<Piece>, Error> {
        let rec = self.buffers.get(span.buffer)?;
        let length = rec.info.resolve(what, span.offset, span.length)?;
        self.pieces_of(rec, span.offset, length, merge)
    }

    /// The one piece of a range that must lie in one chunk.
    pub(crate) fn single_piece(
        &self,
        span: BufferSpan,
        what: &'static str,
    ) -> Result<(Piece, BufferInfo), Error> {
        let rec = self.buffers.get(span.buffer)?;
        let length = rec.info.resolve(what, span.offset, span.length)?;
        let layout = ChunkLayout::of(rec.info.size, rec.info.chunk_size);
        let segment = layout.within_one_chunk(span.offset, length)?;
        if length == 0 {
            let empty = Piece {
                buffer: vk::Buffer::null(),
                offset: 0,
                host: core::ptr::NonNull::dangling().as_ptr(),
                len: 0,
                at: 0,
            };
            return Ok((empty, rec.info));
        }
        let chunk = self.chunk_piece(rec, segment.chunk, false)?;
        Ok((
            Piece {
                buffer: chunk.buffer,
                offset: chunk.offset + segment.chunk_offset,
                host: if chunk.host.is_null() {
                    chunk.host
                } else {
                    // SAFETY: the segment lies inside the chunk, which is mapped.
                    unsafe { chunk.host.add(segment.chunk_offset as usize) }
                },
                len: length,
                at: 0,
            },
            rec.info,
        ))
    }

    /// Checks a mapping request and returns the host bytes it covers.
    pub(crate) fn map_piece(
        &self,
        span: BufferSpan,
        access: MemoryAccess,
        usage: hal_core::memory::BufferUsage,
    ) -> Result<(Piece, BufferSpan), Error> {
        let rec = self.buffers.get(span.buffer)?;
        if !rec.host_visible {
            return Err(Error::NotMappable);
        }
        rec.info.check_mapping(access, usage)?;
        let (piece, _) = self.single_piece(span, "map")?;
        Ok((piece, BufferSpan::new(span.buffer, span.offset, piece.len)))
    }
}
