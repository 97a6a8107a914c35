//! Loading large host data (constant pools) into device buffers at the bus's speed.
//!
//! The data moves in windows, pipelined: while the GPU copies one window, the host prepares
//! the next. A window is either the caller's own pages imported in place
//! (`VK_EXT_external_memory_host`, no host copy at all) or a copy into one of two staging
//! buffers of at most [`VulkanConfig::staging_bytes`](crate::VulkanConfig) each, filled by
//! several threads. Staging memory therefore stays bounded (two slots) however large the
//! load is, and imported windows are released as soon as their copy has run.

use crate::buffer::Piece;
use crate::device::VulkanDevice;
use crate::staging::InternalBuffer;
use ash::vk;
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, Error};
use std::collections::VecDeque;

/// How [`VulkanDevice::load_from_host`] may move the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadPath {
    /// Import the caller's pages in place where the device allows it, stage the rest.
    Auto,
    /// Always copy through the two bounded staging buffers.
    Staging,
}

/// Options for [`VulkanDevice::load_from_host`].
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Which paths the load may take.
    pub path: LoadPath,
    /// Bytes per imported window (rounded to the import alignment).
    pub import_window: u64,
    /// Imported windows in flight at once (at least 1).
    pub imports_in_flight: usize,
    /// Host threads that fill a staging buffer (at least 1).
    pub copy_threads: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            path: LoadPath::Auto,
            import_window: 256 << 20,
            imports_in_flight: 3,
            copy_threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(8),
        }
    }
}

/// What a load did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// Bytes loaded.
    pub bytes: u64,
    /// Bytes the GPU copied straight from the caller's imported pages.
    pub imported_bytes: u64,
    /// Bytes copied through the staging buffers.
    pub staged_bytes: u64,
    /// Bytes written through a mapping (a host-visible target needs no GPU copy).
    pub mapped_bytes: u64,
    /// Windows submitted to the GPU.
    pub windows: u64,
    /// Staging memory the load held at most (both slots).
    pub staging_bytes: u64,
}

/// A submitted window and what it holds until its copy has run.
struct InFlight {
    value: u64,
    cb: vk::CommandBuffer,
    import: Option<(vk::Buffer, vk::DeviceMemory)>,
    slot: Option<usize>,
}

/// Copies `src` into `dst` on up to `threads` threads.
fn parallel_copy(dst: &mut [u8], src: &[u8], threads: usize) {
    const MIN_PER_THREAD: usize = 1 << 20;
    let threads = threads.clamp(1, src.len().div_ceil(MIN_PER_THREAD).max(1));
    if threads == 1 {
        dst.copy_from_slice(src);
        return;
    }
    let per = src.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for (d, s) in dst.chunks_mut(per).zip(src.chunks(per)) {
            scope.spawn(move || d.copy_from_slice(s));
        }
    });
}

impl VulkanDevice<'_> {
    /// Loads `source` into `target`, a span of a writable transfer-target buffer of exactly
    /// `source.len()` bytes, and returns once the bytes are on the device.
    ///
    /// Device-only targets are filled by pipelined GPU copies from imported windows of
    /// `source` (where [`LoadOptions::path`] allows and the device accepts the pages) or
    /// from two staging buffers of at most `staging_bytes` each; host-visible targets are
    /// written through their mapping. Work queued before runs first.
    pub fn load_from_host(
        &mut self,
        source: &[u8],
        target: BufferSpan,
        options: LoadOptions,
    ) -> Result<LoadStats, Error> {
        let rec = self.buffers.get(target.buffer)?;
        let info = rec.info;
        info.require_access(MemoryAccess::WRITE)?;
        info.require_usage("load", BufferUsage::TRANSFER_TARGET)?;
        let length = info.resolve("load", target.offset, target.length)?;
        if source.len() as u64 != length {
            return Err(Error::InvalidArgument(
                "load source length differs from the span's",
            ));
        }
        let mut stats = LoadStats {
            bytes: length,
            ..LoadStats::default()
        };
        if length == 0 {
            return Ok(stats);
        }
        if rec.host_visible {
            self.write_span(
                BufferSpan::new(target.buffer, target.offset, length),
                source,
            )?;
            stats.mapped_bytes = length;
            return Ok(stats);
        }
        let mut ring: [Option<InternalBuffer>; 2] = [None, None];
        let mut flight = VecDeque::new();
        let result = self.load_windows(source, target, options, &mut ring, &mut flight, &mut stats);
        // Whatever happened, nothing this load submitted may outlive it.
        let drained = self.retire(&mut flight, 0);
        for slot in ring.into_iter().flatten() {
            slot.destroy(&self.ctx);
        }
        result.and(drained).map(|()| stats)
    }

    fn load_windows(
        &mut self,
        source: &[u8],
        target: BufferSpan,
        options: LoadOptions,
        ring: &mut [Option<InternalBuffer>; 2],
        flight: &mut VecDeque<InFlight>,
        stats: &mut LoadStats,
    ) -> Result<(), Error> {
        let length = source.len() as u64;
        let slot_bytes = self.config.staging_bytes.clamp(4096, length.max(4096));
        let align = self.ctx.limits.min_imported_host_pointer_alignment.max(1);
        let mut try_import = options.path == LoadPath::Auto && self.ctx.host_memory.is_some();
        let mut next_slot = 0usize;
        let base = source.as_ptr() as u64;
        let mut at = 0u64;
        while at < length {
            if try_import {
                // Windows end on aligned addresses so no page is imported twice at once.
                let want = options.import_window.max(align);
                let end = ((base + at + want) & !(align - 1)).saturating_sub(base);
                let n = if end > at { end - at } else { want }.min(length - at);
                self.retire(flight, options.imports_in_flight.max(1) - 1)?;
                // SAFETY: `source[at..at + n]` is borrowed for the whole load, which waits
                // for every copy from it before returning.
                let ptr = unsafe { source.as_ptr().add(at as usize) }.cast_mut();
                if let Some((buffer, memory, offset)) = self.import_window(ptr, n) {
                    let window = BufferSpan::new(target.buffer, target.offset + at, n);
                    match self.submit_copy(buffer, offset, window) {
                        Ok((cb, value)) => flight.push_back(InFlight {
                            value,
                            cb,
                            import: Some((buffer, memory)),
                            slot: None,
                        }),
                        Err(e) => {
                            crate::memory::destroy_buffer(&self.ctx, buffer);
                            crate::memory::free_memory(&self.ctx, memory);
                            return Err(e);
                        }
                    }
                    stats.imported_bytes += n;
                    stats.windows += 1;
                    at += n;
                    continue;
                }
                // The device refused these pages: stage from here on.
                try_import = false;
            }
            // Staging: wait until the slot's previous copy has run, then refill it.
            let slot = next_slot;
            next_slot ^= 1;
            while flight.iter().any(|f| f.slot == Some(slot)) {
                self.retire(flight, flight.len() - 1)?;
            }
            if ring[slot].is_none() {
                let type_index = self.memory.pools[0].type_index;
                ring[slot] = Some(InternalBuffer::new(&self.ctx, slot_bytes, type_index)?);
                stats.staging_bytes += slot_bytes;
            }
            let staging = ring[slot].as_mut().ok_or(Error::Driver {
                what: "no staging slot",
                code: 0,
            })?;
            let n = staging.size.min(length - at);
            parallel_copy(
                &mut staging.bytes_mut()[..n as usize],
                &source[at as usize..(at + n) as usize],
                options.copy_threads,
            );
            let window = BufferSpan::new(target.buffer, target.offset + at, n);
            let (cb, value) = self.submit_copy(staging.buffer, 0, window)?;
            flight.push_back(InFlight {
                value,
                cb,
                import: None,
                slot: Some(slot),
            });
            stats.staged_bytes += n;
            stats.windows += 1;
            at += n;
        }
        Ok(())
    }

    /// Imports `n` bytes at `ptr` in place: the buffer, its memory, and the offset of `ptr`
    /// in it; `None` where the device will not.
    fn import_window(
        &mut self,
        ptr: *mut u8,
        n: u64,
    ) -> Option<(vk::Buffer, vk::DeviceMemory, u64)> {
        match self.import_in_place(ptr, n)? {
            crate::buffer::Backing::Host {
                buffer,
                memory,
                offset,
                ..
            } => Some((buffer, memory, offset)),
            _ => None,
        }
    }

    /// Records and submits a copy of `window.length` bytes from `source` (starting at
    /// `source_offset`) into `window`, between full barriers; returns the command buffer
    /// and the progress value that marks it done.
    fn submit_copy(
        &mut self,
        source: vk::Buffer,
        source_offset: u64,
        window: BufferSpan,
    ) -> Result<(vk::CommandBuffer, u64), Error> {
        let pieces: Vec<Piece> = self.pieces(window, "load", true)?;
        let regions: Vec<vk::BufferCopy> = pieces
            .iter()
            .map(|p| {
                vk::BufferCopy::default()
                    .src_offset(source_offset + p.at)
                    .dst_offset(p.offset)
                    .size(p.len)
            })
            .collect();
        let cb = self.ctx.begin()?;
        self.ctx.full_barrier(cb);
        for (piece, region) in pieces.iter().zip(&regions) {
            // SAFETY: `cb` is recording; the source range lies in a live buffer the load
            // keeps until this submission has run, the target range in a live piece of the
            // (checked) target span; they are distinct memory.
            unsafe {
                self.ctx.device.cmd_copy_buffer(
                    cb,
                    source,
                    piece.buffer,
                    core::slice::from_ref(region),
                )
            };
        }
        self.ctx.full_barrier(cb);
        let submitted = self.ctx.end(cb).and_then(|()| self.ctx.submit(cb));
        match submitted {
            Ok(value) => Ok((cb, value)),
            Err(e) => {
                self.ctx.free_command_buffer(cb);
                Err(e)
            }
        }
    }

    /// Waits for the oldest windows until at most `keep` are in flight, freeing what each
    /// held. Every window is retired even if a wait fails (the device is then idled first).
    fn retire(&mut self, flight: &mut VecDeque<InFlight>, keep: usize) -> Result<(), Error> {
        let mut result = Ok(());
        while flight.len() > keep {
            let Some(done) = flight.pop_front() else {
                break;
            };
            if let Err(e) = self.ctx.wait_value(done.value) {
                self.ctx.wait_idle();
                result = result.and(Err(e));
            }
            self.ctx.free_command_buffer(done.cb);
            if let Some((buffer, memory)) = done.import {
                crate::memory::destroy_buffer(&self.ctx, buffer);
                crate::memory::free_memory(&self.ctx, memory);
            }
        }
        result
    }
}
