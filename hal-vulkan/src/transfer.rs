//! Host transfers: mappings, `read_buffer`/`write_buffer` (straight through the mapping when
//! the memory is host-visible, through a bounded staging buffer when it is not), and the
//! streaming `queue_read`.

use crate::staging::InternalBuffer;
use crate::types::{Piece, VulkanDevice};
use ash::vk;
use hal_core::device::{HostSource, Mapped, ReadStats};
use hal_core::memory::MemoryAccess;
use hal_core::{BufferSpan, Error};
use std::marker::PhantomData;

/// A scoped mapping of host-visible device memory (or of imported host memory).
pub struct VulkanMapping<'a> {
    ptr: *mut u8,
    len: usize,
    writable: bool,
    _device: PhantomData<&'a mut ()>,
}

impl<'a> VulkanMapping<'a> {
    /// # Safety
    /// `ptr..ptr + len` is mapped memory of the device borrowed mutably for `'a`, which no
    /// device work touches meanwhile.
    pub(crate) unsafe fn new(ptr: *mut u8, len: usize, access: MemoryAccess) -> Self {
        Self {
            ptr,
            len,
            writable: access.contains(MemoryAccess::WRITE),
            _device: PhantomData,
        }
    }
}

impl Mapped for VulkanMapping<'_> {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `new`'s contract: mapped memory exclusively ours for the borrow.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn bytes_mut(&mut self) -> Result<&mut [u8], Error> {
        if !self.writable {
            return Err(Error::Access {
                needed: MemoryAccess::WRITE.bits(),
                allowed: MemoryAccess::READ.bits(),
            });
        }
        // SAFETY: as `bytes`, and the mapping was made for writing.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
}

impl VulkanDevice<'_> {
    /// The staging buffer, at least `want` bytes (bounded by the configuration).
    fn staging(&mut self, want: u64) -> Result<&mut InternalBuffer, Error> {
        let want = want.clamp(1, self.config.staging_bytes.max(4096));
        if self.staging.as_ref().is_none_or(|s| s.size < want) {
            if let Some(old) = self.staging.take() {
                old.destroy(&self.ctx);
            }
            let type_index = self.memory.pools[0].type_index;
            self.staging = Some(InternalBuffer::new(&self.ctx, want, type_index)?);
        }
        self.staging
            .as_mut()
            .ok_or(Error::Internal("no staging buffer"))
    }

    /// Copies between a device piece and the staging buffer, waiting for it.
    fn staged_copy(
        &mut self,
        piece: &Piece,
        at: u64,
        n: u64,
        to_device: bool,
    ) -> Result<(), Error> {
        self.staged_transfers += 1;
        let staging = self
            .staging
            .as_ref()
            .map(|s| s.buffer)
            .ok_or(Error::Internal("no staging buffer"))?;
        let target = piece.buffer;
        let offset = piece.offset + at;
        self.ctx.one_time(|d, cb| {
            let (src, dst, region) = if to_device {
                (
                    staging,
                    target,
                    vk::BufferCopy::default()
                        .src_offset(0)
                        .dst_offset(offset)
                        .size(n),
                )
            } else {
                (
                    target,
                    staging,
                    vk::BufferCopy::default()
                        .src_offset(offset)
                        .dst_offset(0)
                        .size(n),
                )
            };
            // SAFETY: `cb` is recording; both ranges lie in live, distinct buffers.
            unsafe { d.cmd_copy_buffer(cb, src, dst, &[region]) };
        })
    }

    /// Writes `data` over a checked span: through the mapping, or staged.
    pub(crate) fn write_span(&mut self, span: BufferSpan, data: &[u8]) -> Result<(), Error> {
        for piece in self.pieces(span, "write", false)? {
            let source = data
                .get(piece.at as usize..(piece.at + piece.len) as usize)
                .ok_or(Error::InvalidArgument(
                    "write length differs from the span's",
                ))?;
            if !piece.host.is_null() {
                // SAFETY: `piece.host` points at `piece.len` mapped bytes of this buffer; the
                // device is borrowed mutably and no device work is in flight.
                unsafe {
                    core::ptr::copy_nonoverlapping(source.as_ptr(), piece.host, source.len())
                };
                continue;
            }
            let mut done = 0u64;
            while done < piece.len {
                let staging = self.staging(piece.len - done)?;
                let n = staging.size.min(piece.len - done);
                staging.bytes_mut()[..n as usize]
                    .copy_from_slice(&source[done as usize..(done + n) as usize]);
                self.staged_copy(&piece, done, n, true)?;
                done += n;
            }
        }
        Ok(())
    }

    /// Reads a checked span into `out`: through the mapping, or staged.
    pub(crate) fn read_span(&mut self, span: BufferSpan, out: &mut [u8]) -> Result<(), Error> {
        for piece in self.pieces(span, "read", false)? {
            let target = out
                .get_mut(piece.at as usize..(piece.at + piece.len) as usize)
                .ok_or(Error::InvalidArgument(
                    "read length differs from the output's",
                ))?;
            if !piece.host.is_null() {
                // SAFETY: as in `write_span`.
                unsafe {
                    core::ptr::copy_nonoverlapping(piece.host, target.as_mut_ptr(), target.len())
                };
                continue;
            }
            let mut done = 0u64;
            while done < piece.len {
                let n = self.staging(piece.len - done)?.size.min(piece.len - done);
                self.staged_copy(&piece, done, n, false)?;
                let staging = self.staging(n)?;
                target[done as usize..(done + n) as usize]
                    .copy_from_slice(&staging.bytes_mut()[..n as usize]);
                done += n;
            }
        }
        Ok(())
    }

    /// Streams `source` into a checked, writable span in pieces of at most `chunk_bytes`.
    pub(crate) fn stream<S: HostSource>(
        &mut self,
        source: &mut S,
        target: BufferSpan,
        length: u64,
        chunk_bytes: u64,
    ) -> Result<ReadStats, Error> {
        let mut stats = ReadStats::default();
        let mut bounce = Vec::new();
        while stats.bytes < length {
            let n = chunk_bytes.min(length - stats.bytes);
            let chunk = BufferSpan::new(target.buffer, target.offset + stats.bytes, n);
            let base = stats.bytes;
            for piece in self.pieces(chunk, "streaming read", false)? {
                if !piece.host.is_null() {
                    // SAFETY: as in `write_span`; the source is caller memory the device does
                    // not own, so this is the only view of these bytes.
                    let bytes =
                        unsafe { core::slice::from_raw_parts_mut(piece.host, piece.len as usize) };
                    source.read_at(base + piece.at, bytes)?;
                } else {
                    bounce.resize(piece.len as usize, 0);
                    source.read_at(base + piece.at, &mut bounce)?;
                    let span = BufferSpan::new(target.buffer, chunk.offset + piece.at, piece.len);
                    self.write_span(span, &bounce)?;
                }
            }
            stats.bytes += n;
            stats.chunks += 1;
        }
        Ok(stats)
    }
}
