//! Loading large host data (constant pools) into device buffers at the bus's speed.
//!
//! The data moves in windows, pipelined: while the GPU copies one window, the host prepares
//! the next. A window is either the caller's own pages imported in place
//! (`VK_EXT_external_memory_host`, no host copy at all; pinned by several threads at once)
//! or a copy into one of [`STAGING_SLOTS`] staging buffers that together hold at most twice
//! [`VulkanConfig::staging_bytes`](crate::VulkanConfig), filled by a set of copy threads
//! that lives as long as the load. Staging memory therefore stays bounded however large the
//! load is, and imported windows are released as soon as their copy has run.

use crate::import::import_pages;
use crate::staging::InternalBuffer;
use crate::types::{Backing, Piece, VulkanDevice};
use ash::vk;
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, Error};
use std::collections::VecDeque;
use std::sync::mpsc;

/// Staging slots a load cycles through; together they hold at most twice
/// [`VulkanConfig::staging_bytes`](crate::VulkanConfig).
pub const STAGING_SLOTS: usize = 4;

/// How [`VulkanDevice::load_from_host`] may move the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadPath {
    /// Import the caller's pages in place where the device allows it, stage the rest.
    Auto,
    /// Always copy through the bounded staging buffers.
    Staging,
}

/// Options for [`VulkanDevice::load_from_host`].
#[derive(Debug, Clone, Copy)]
pub struct HostLoadOptions {
    /// Which paths the load may take.
    pub path: LoadPath,
    /// Bytes per imported window (rounded to the import alignment).
    pub import_window: u64,
    /// Host threads that import (pin) windows at once, and windows per batch (at least 1).
    /// Pinning costs the host time per page, so several threads pin windows at once.
    pub import_threads: usize,
    /// Imported windows in flight at once (at least one batch).
    pub imports_in_flight: usize,
    /// Host threads that fill a staging buffer (at least 1).
    pub copy_threads: usize,
}

impl Default for HostLoadOptions {
    fn default() -> Self {
        // Every core: a large load is host-memory-bound, and nothing else should be running.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            path: LoadPath::Auto,
            import_window: 256 << 20,
            import_threads: threads,
            imports_in_flight: 2 * threads,
            copy_threads: threads,
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
    /// Staging memory the load held at most (every slot).
    pub staging_bytes: u64,
}

/// One load's inputs, as the window loop sees them.
#[derive(Clone, Copy)]
struct LoadJob<'a> {
    source: &'a [u8],
    target: BufferSpan,
    options: HostLoadOptions,
    copier: &'a Copier,
}

/// What one batch of imports moved.
#[derive(Default)]
struct Imported {
    bytes: u64,
    windows: u64,
    /// The device refused a window's pages: the rest of the load is staged.
    refused: bool,
}

/// A submitted window and what it holds until its copy has run.
struct InFlight {
    value: u64,
    cb: vk::CommandBuffer,
    import: Option<(vk::Buffer, vk::DeviceMemory)>,
    slot: Option<usize>,
}

/// One part of a staging fill, for a copy thread.
struct Part {
    src: *const u8,
    dst: *mut u8,
    len: usize,
}

// SAFETY: a `Part` names bytes of a source and of a staging mapping that `Copier::copy`
// borrows (shared and exclusively) until every part it sent is reported done; parts never
// overlap, so each is touched by one thread only.
unsafe impl Send for Part {}

/// Threads that copy parts of one staging fill in parallel, alive for one load (spawning
/// them per window would cost more than a window's copy on a fast bus).
struct Copier {
    jobs: Vec<mpsc::Sender<Part>>,
    done: mpsc::Receiver<()>,
}

impl Copier {
    /// Starts `threads` workers in `scope` (none for 1: the caller's thread copies).
    fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, threads: usize) -> Self {
        let (done_tx, done) = mpsc::channel();
        let jobs = (0..if threads > 1 { threads } else { 0 })
            .map(|_| {
                let (tx, rx) = mpsc::channel::<Part>();
                let done_tx = done_tx.clone();
                scope.spawn(move || {
                    for part in rx {
                        // SAFETY: see `Part`: readable and writable, disjoint, and borrowed
                        // by `copy` until this part is reported done below.
                        unsafe { core::ptr::copy_nonoverlapping(part.src, part.dst, part.len) };
                        if done_tx.send(()).is_err() {
                            return;
                        }
                    }
                });
                tx
            })
            .collect();
        Self { jobs, done }
    }

    /// Copies `src` into `dst` (same length), split over the workers.
    fn copy(&self, dst: &mut [u8], src: &[u8]) -> Result<(), Error> {
        const MIN_PART: usize = 1 << 20;
        if self.jobs.is_empty() || src.len() < 2 * MIN_PART || dst.len() != src.len() {
            dst.copy_from_slice(src);
            return Ok(());
        }
        // Both base pointers are taken once, before any worker writes: deriving them again
        // from the slices later would be a (retagging) access racing with the workers.
        let (src_base, dst_base) = (src.as_ptr(), dst.as_mut_ptr());
        let part = src.len().div_ceil(self.jobs.len()).next_multiple_of(4096);
        let mut sent = 0;
        let mut refused = false;
        for (i, job) in self.jobs.iter().enumerate() {
            let start = i * part;
            if start >= src.len() {
                break;
            }
            // SAFETY: `start < len`, so both offsets stay inside their slices.
            let (s, d) = unsafe { (src_base.add(start), dst_base.add(start)) };
            let len = part.min(src.len() - start);
            if job
                .send(Part {
                    src: s,
                    dst: d,
                    len,
                })
                .is_err()
            {
                refused = true;
                break;
            }
            sent += 1;
        }
        let mut finished = 0;
        while finished < sent && self.done.recv().is_ok() {
            finished += 1;
        }
        if refused || finished < sent {
            return Err(Error::Internal("a staging copy thread stopped"));
        }
        Ok(())
    }
}

impl VulkanDevice<'_> {
    /// Loads `source` into `target`, a span of a writable transfer-target buffer of exactly
    /// `source.len()` bytes, and returns once the bytes are on the device.
    ///
    /// Device-only targets are filled by pipelined GPU copies from imported windows of
    /// `source` (where [`HostLoadOptions::path`] allows and the device accepts the pages) or
    /// from staging buffers holding at most `2 × staging_bytes`; host-visible targets are
    /// written through their mapping. Work queued before runs first.
    pub fn load_from_host(
        &mut self,
        source: &[u8],
        target: BufferSpan,
        options: HostLoadOptions,
    ) -> Result<LoadStats, Error> {
        self.buffers.get(target.buffer)?;
        self.settle()?;
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
        let mut ring: Vec<Option<InternalBuffer>> = (0..STAGING_SLOTS).map(|_| None).collect();
        let mut flight = VecDeque::new();
        let result = std::thread::scope(|scope| {
            let copier = Copier::start(scope, options.copy_threads);
            let job = LoadJob {
                source,
                target,
                options,
                copier: &copier,
            };
            self.load_windows(&job, &mut ring, &mut flight, &mut stats)
            // The workers end when `copier` (their job channels) drops here.
        });
        // Whatever happened, nothing this load submitted may outlive it.
        let drained = self.retire(&mut flight, 0);
        for slot in ring.into_iter().flatten() {
            slot.destroy(&self.ctx);
        }
        result.and(drained).map(|()| stats)
    }

    fn load_windows(
        &mut self,
        job: &LoadJob<'_>,
        ring: &mut [Option<InternalBuffer>],
        flight: &mut VecDeque<InFlight>,
        stats: &mut LoadStats,
    ) -> Result<(), Error> {
        let LoadJob {
            source,
            target,
            options,
            copier,
        } = *job;
        let length = source.len() as u64;
        // Two staging buffers' worth of memory, in smaller slots so the GPU starts copying a
        // part while the host fills the next.
        let slot_bytes = (self.config.staging_bytes * 2 / STAGING_SLOTS as u64)
            .next_multiple_of(4096)
            .clamp(4096, length.next_multiple_of(4096));
        let mut try_import = options.path == LoadPath::Auto && self.ctx.host_memory.is_some();
        let mut next_slot = 0usize;
        let mut at = 0u64;
        while at < length {
            if try_import {
                let imported = self.import_batch(source, target, at, options, flight)?;
                stats.imported_bytes += imported.bytes;
                stats.windows += imported.windows;
                at += imported.bytes;
                if imported.refused {
                    // The device refused these pages: stage from here on.
                    try_import = false;
                }
                continue;
            }
            // Staging: wait until the slot's previous copy has run, then refill it.
            let slot = next_slot;
            next_slot = (next_slot + 1) % ring.len();
            while flight.iter().any(|f| f.slot == Some(slot)) {
                self.retire(flight, flight.len() - 1)?;
            }
            if ring[slot].is_none() {
                let type_index = self.memory.pools[0].type_index;
                ring[slot] = Some(InternalBuffer::new_cached(
                    &self.ctx, slot_bytes, type_index,
                )?);
                stats.staging_bytes += slot_bytes;
            }
            let staging = ring[slot]
                .as_mut()
                .ok_or(Error::Internal("no staging slot"))?;
            let n = staging.size.min(length - at);
            copier.copy(
                &mut staging.bytes_mut()[..n as usize],
                &source[at as usize..(at + n) as usize],
            )?;
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

    /// Imports the next batch of windows of `source` from `at` on `import_threads` threads
    /// (which also unpin the windows retired to make room) and submits their copies.
    fn import_batch(
        &mut self,
        source: &[u8],
        target: BufferSpan,
        at: u64,
        options: HostLoadOptions,
        flight: &mut VecDeque<InFlight>,
    ) -> Result<Imported, Error> {
        let length = source.len() as u64;
        let align = self.ctx.limits.min_imported_host_pointer_alignment.max(1);
        let want = options.import_window.max(align);
        let base = source.as_ptr() as u64;
        let threads = options.import_threads.max(1);
        // Windows end on aligned addresses so no page is imported twice at once.
        let mut windows = Vec::with_capacity(threads);
        let mut end_at = at;
        while windows.len() < threads && end_at < length {
            let end = ((base + end_at + want) & !(align - 1)).saturating_sub(base);
            let n = if end > end_at { end - end_at } else { want }.min(length - end_at);
            windows.push((end_at, n));
            end_at += n;
        }
        let keep = options
            .imports_in_flight
            .max(windows.len())
            .saturating_sub(windows.len());
        let done = self.retire_keeping_imports(flight, keep)?;
        let ctx = &self.ctx;
        let preferred = self.memory.pools[0].type_index;
        let results: Vec<Option<(vk::Buffer, vk::DeviceMemory, u64)>> =
            std::thread::scope(|scope| {
                let per = done.len().div_ceil(threads).max(1);
                for group in done.chunks(per) {
                    scope.spawn(move || {
                        for &(buffer, memory) in group {
                            crate::memory::destroy_buffer(ctx, buffer);
                            crate::memory::free_memory(ctx, memory);
                        }
                    });
                }
                let handles: Vec<_> = windows
                    .iter()
                    .map(|&(a, n)| {
                        // An address, not a pointer, crosses to the thread; the bytes are
                        // `source[a..a + n]`, borrowed for the whole load.
                        let address = base as usize + a as usize;
                        scope.spawn(move || {
                            match import_pages(ctx, preferred, address as *mut u8, n)? {
                                Backing::Host {
                                    buffer,
                                    memory,
                                    offset,
                                    ..
                                } => Some((buffer, memory, offset)),
                                _ => None,
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().ok().flatten())
                    .collect()
            });
        let mut imported = Imported::default();
        let mut failure = None;
        for (&(a, n), result) in windows.iter().zip(results) {
            let Some((buffer, memory, offset)) = result else {
                imported.refused = true;
                continue;
            };
            if imported.refused || failure.is_some() {
                // After a refusal the rest is staged; after an error nothing more goes.
                crate::memory::destroy_buffer(&self.ctx, buffer);
                crate::memory::free_memory(&self.ctx, memory);
                continue;
            }
            let window = BufferSpan::new(target.buffer, target.offset + a, n);
            match self.submit_copy(buffer, offset, window) {
                Ok((cb, value)) => {
                    flight.push_back(InFlight {
                        value,
                        cb,
                        import: Some((buffer, memory)),
                        slot: None,
                    });
                    imported.bytes += n;
                    imported.windows += 1;
                }
                Err(e) => {
                    crate::memory::destroy_buffer(&self.ctx, buffer);
                    crate::memory::free_memory(&self.ctx, memory);
                    failure = Some(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(imported),
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
        self.ctx.barrier(cb, false);
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
        self.ctx.end_barrier(cb);
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
        let done = self.retire_keeping_imports(flight, keep);
        for &(buffer, memory) in done.as_deref().unwrap_or_default() {
            crate::memory::destroy_buffer(&self.ctx, buffer);
            crate::memory::free_memory(&self.ctx, memory);
        }
        done.map(|_| ())
    }

    /// [`Self::retire`], but the imports of the retired windows (whose copies have run) are
    /// returned for the caller to free. On a failed wait they are freed here.
    fn retire_keeping_imports(
        &mut self,
        flight: &mut VecDeque<InFlight>,
        keep: usize,
    ) -> Result<Vec<(vk::Buffer, vk::DeviceMemory)>, Error> {
        let mut imports = Vec::new();
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
            imports.extend(done.import);
        }
        if result.is_err() {
            for (buffer, memory) in imports.drain(..) {
                crate::memory::destroy_buffer(&self.ctx, buffer);
                crate::memory::free_memory(&self.ctx, memory);
            }
        }
        result.map(|()| imports)
    }
}

#[cfg(test)]
mod tests {
    use super::Copier;

    #[test]
    fn copier_threads_copy_every_byte() {
        for threads in [1, 3] {
            for len in [0usize, 100, (2 << 20) + 4097, 5 << 20] {
                // Sparse marks keep this quick under Miri; each part gets some.
                let mut src = vec![0x5Au8; len];
                for i in (0..len).step_by(4093) {
                    src[i] = (i % 251) as u8;
                }
                let mut dst = vec![0u8; len];
                std::thread::scope(|scope| {
                    let copier = Copier::start(scope, threads);
                    copier.copy(&mut dst, &src).expect("copy");
                });
                assert!(dst == src, "{threads} threads, {len} bytes");
            }
        }
    }
}
