//! Section 1: a constant pool loaded from host memory into one chunked (sparse) device
//! buffer, against a plain `vkCmdCopyBuffer` from a pinned host-visible buffer, and verified
//! on the device by the checksum kernel.

use crate::pool::HostPool;
use crate::{gbps, Sizes};
use hal_core::command::{BufferRef, CommandBufferMode, Record, Workgroups};
use hal_core::memory::BufferParams;
use hal_core::{
    Buffer, BufferSpan, Device, Executable, ExecutableSource, SemaphoreValue, Submit, Timeout,
};
use hal_vulkan::{HostLoadOptions, LoadPath, LoadStats, VulkanDevice};
use serde_json::{json, Value};
use std::time::Instant;

include!(concat!(env!("OUT_DIR"), "/checksum.rs"));

/// Fills `target` with zeros and waits until that has run (so no timing counts it).
fn clear(device: &mut VulkanDevice<'_>, target: Buffer) -> Result<(), String> {
    let cleared = device
        .create_semaphore(0)
        .map_err(|e| format!("semaphore: {e}"))?;
    let signal = [SemaphoreValue::new(cleared, 1)];
    let done = device
        .queue_fill(Submit::new(&[], &signal), BufferSpan::whole(target), &[0])
        .and_then(|()| device.wait_semaphores(&signal, Timeout::Infinite))
        .map_err(|e| format!("clearing the target: {e}"));
    let _ = device.release_semaphore(cleared);
    done
}

/// One timed load and its verification.
fn timed_load(
    device: &mut VulkanDevice<'_>,
    pool: &HostPool,
    target: Buffer,
    path: LoadPath,
    tuning: HostLoadOptions,
) -> Result<(f64, LoadStats), String> {
    let options = HostLoadOptions { path, ..tuning };
    let start = Instant::now();
    let stats = device
        .load_from_host(pool.bytes(), BufferSpan::whole(target), options)
        .map_err(|e| format!("load ({path:?}): {e}"))?;
    Ok((start.elapsed().as_secs_f64(), stats))
}

/// Runs the checksum kernel over every window of `target` and compares with the host's
/// sums; returns the number of words that differ from the pattern.
fn verify(
    device: &mut VulkanDevice<'_>,
    kernel: Executable,
    target: Buffer,
    len: u64,
    window: u64,
    sums: &[u32],
) -> Result<u64, String> {
    let windows = len.div_ceil(window);
    let counters = device
        .allocate_buffer(BufferParams::host_visible(), windows * 8)
        .map_err(|e| format!("counters: {e}"))?;
    let run = (|| -> Result<u64, String> {
        device
            .queue_fill(Submit::NOW, BufferSpan::whole(counters), &[0])
            .map_err(|e| format!("zeroing counters: {e}"))?;
        let cb = device
            .create_command_buffer(CommandBufferMode::OneShot, (windows * 4) as u32, 0)
            .map_err(|e| format!("checksum command buffer: {e}"))?;
        for w in 0..windows {
            let at = w * window;
            let n = window.min(len - at);
            let first = at / 4;
            let bindings = [
                BufferRef::span(BufferSpan::new(target, at, n)),
                BufferRef::span(BufferSpan::new(counters, w * 8, 8)),
            ];
            let record = Record::Dispatch {
                executable: kernel,
                workgroups: Workgroups::Direct([
                    ((n / 4).div_ceil(64 * 64)).clamp(1, 65535) as u32,
                    1,
                    1,
                ]),
                constants: &[first as u32, (first >> 32) as u32],
                bindings: &bindings,
            };
            device
                .record(cb, record)
                .map_err(|e| format!("checksum dispatch: {e}"))?;
        }
        device.end(cb).map_err(|e| format!("checksum end: {e}"))?;
        device
            .queue_execute(Submit::NOW, cb, &[])
            .map_err(|e| format!("checksum execute: {e}"))?;
        device
            .release_command_buffer(cb)
            .map_err(|e| format!("checksum release: {e}"))?;
        let mut out = vec![0u8; (windows * 8) as usize];
        device
            .read_buffer(BufferSpan::whole(counters), &mut out)
            .map_err(|e| format!("reading counters: {e}"))?;
        let mut bad = 0u64;
        for (w, pair) in out.chunks_exact(8).enumerate() {
            let differ = u32::from_ne_bytes(pair[..4].try_into().unwrap_or_default());
            let sum = u32::from_ne_bytes(pair[4..].try_into().unwrap_or_default());
            bad += u64::from(differ);
            if sum != sums[w] {
                return Err(format!(
                    "window {w}: device sum {sum:#010x}, host sum {:#010x}",
                    sums[w]
                ));
            }
        }
        Ok(bad)
    })();
    let _ = device.release_buffer(counters);
    run
}

/// The host's own copy bandwidth with `threads` threads: `bytes` of the pool copied into
/// a buffer of `window` bytes (touched first), the ceiling of any staged load on this host.
fn host_copy_gbps(pool: &HostPool, window: usize, bytes: usize, threads: usize) -> f64 {
    let mut scratch = vec![1u8; window];
    let src = pool.bytes();
    let start = Instant::now();
    let mut done = 0;
    while done < bytes {
        let at = done % (src.len() - window + 1);
        let from = &src[at..at + window];
        let per = window.div_ceil(threads.max(1));
        std::thread::scope(|scope| {
            for (d, s) in scratch.chunks_mut(per).zip(from.chunks(per)) {
                scope.spawn(move || d.copy_from_slice(s));
            }
        });
        done += window;
    }
    gbps(done as u64, start.elapsed().as_secs_f64())
}

/// Section 1. `sizes.pool` bytes of pattern; returns the JSON object of the section.
pub fn run(device: &mut VulkanDevice<'_>, sizes: &Sizes, threads: usize) -> Result<Value, String> {
    let fill = Instant::now();
    let (pool, sums) = HostPool::new(sizes.pool, sizes.verify_window, threads, sizes.hugepages)?;
    let fill_s = fill.elapsed().as_secs_f64();
    println!(
        "  host pool: {:.1} GiB filled in {fill_s:.2} s",
        sizes.pool as f64 / (1u64 << 30) as f64
    );
    let window = (sizes.baseline as usize).min(1 << 30);
    let host_copy = host_copy_gbps(&pool, window, 8 * window, sizes.load.copy_threads);
    println!(
        "  host memcpy, {} threads: {host_copy:.2} GB/s (the ceiling of a staged load here)",
        sizes.load.copy_threads
    );
    let target = device
        .allocate_buffer(BufferParams::device_local(), sizes.pool)
        .map_err(|e| format!("device buffer of {} B: {e}", sizes.pool))?;
    let info = device.buffer_info(target).map_err(|e| e.to_string())?;
    let chunks = sizes.pool.div_ceil(info.chunk_size.max(1));
    let kernel = device
        .load_executable(ExecutableSource::Spirv {
            code: CHECKSUM_SPIRV,
            entry: "main",
        })
        .map_err(|e| format!("checksum kernel: {e}"))?;

    // The bus's practical limit: vkCmdCopyBuffer from a pinned host-visible buffer.
    let pinned = device
        .allocate_buffer(BufferParams::host_visible(), sizes.baseline)
        .map_err(|e| format!("pinned buffer: {e}"))?;
    device
        .write_buffer(
            BufferSpan::whole(pinned),
            &pool.bytes()[..sizes.baseline as usize],
        )
        .map_err(|e| format!("pinned buffer: {e}"))?;
    // Queue work is not waited for on submit: each copy signals `copied` at its rep, and
    // the clock stops once the last one has run.
    let copied = device
        .create_semaphore(0)
        .map_err(|e| format!("semaphore: {e}"))?;
    let copy = |device: &mut VulkanDevice<'_>, rep: u64| {
        let at = (rep * sizes.baseline) % (sizes.pool - sizes.baseline + 1);
        let at = at - at % 4;
        let signal = [SemaphoreValue::new(copied, rep + 1)];
        device
            .queue_copy(
                Submit::new(&[], &signal),
                BufferSpan::whole(pinned),
                BufferSpan::new(target, at, sizes.baseline),
                sizes.baseline,
            )
            .map_err(|e| format!("baseline copy: {e}"))
    };
    let reached = |device: &mut VulkanDevice<'_>, rep: u64| {
        device
            .wait_semaphores(&[SemaphoreValue::new(copied, rep + 1)], Timeout::Infinite)
            .map_err(|e| format!("baseline copy: {e}"))
    };
    // Every page of the target touched once first (CPU devices commit memory lazily).
    clear(device, target)?;
    copy(device, 0)?;
    reached(device, 0)?;
    let start = Instant::now();
    for rep in 1..=sizes.baseline_reps {
        copy(device, rep)?;
    }
    reached(device, sizes.baseline_reps)?;
    let copy_s = start.elapsed().as_secs_f64();
    let _ = device.release_semaphore(copied);
    let _ = device.release_buffer(pinned);
    let copy_gbps = gbps(sizes.baseline * sizes.baseline_reps, copy_s);
    println!(
        "  vkCmdCopyBuffer from pinned host memory: {copy_gbps:.2} GB/s ({} × {} MiB)",
        sizes.baseline_reps,
        sizes.baseline >> 20
    );

    let mut paths = Vec::new();
    for path in [LoadPath::Auto, LoadPath::Staging] {
        // Clear the target so the check below sees this load's bytes, not the last one's.
        clear(device, target)?;
        let (secs, stats) = timed_load(device, &pool, target, path, sizes.load)?;
        let rate = gbps(stats.bytes, secs);
        let bad = verify(
            device,
            kernel,
            target,
            sizes.pool,
            sizes.verify_window,
            &sums,
        )?;
        if bad != 0 {
            return Err(format!("{path:?} load: {bad} words differ on the device"));
        }
        let name = match path {
            LoadPath::Auto => "import",
            LoadPath::Staging => "staging",
        };
        println!(
            "  load via {name:8}: {rate:6.2} GB/s = {:5.1}% of the copy ({:.2} s; imported {} MiB, staged {} MiB, staging memory {} MiB; verified)",
            100.0 * rate / copy_gbps,
            secs,
            stats.imported_bytes >> 20,
            stats.staged_bytes >> 20,
            stats.staging_bytes >> 20
        );
        paths.push(json!({
            "path": name,
            "seconds": secs,
            "gb_per_s": rate,
            "fraction_of_copy": rate / copy_gbps,
            "imported_bytes": stats.imported_bytes,
            "staged_bytes": stats.staged_bytes,
            "mapped_bytes": stats.mapped_bytes,
            "windows": stats.windows,
            "staging_bytes": stats.staging_bytes,
            "verified_words_differing": bad,
        }));
    }
    let _ = device.release_executable(kernel);
    let _ = device.release_buffer(target);
    Ok(json!({
        "pool_bytes": sizes.pool,
        "chunk_bytes": info.chunk_size,
        "chunks": chunks,
        "sparse": device.sparse_chunks(1),
        "host_fill_seconds": fill_s,
        "host_copy_gb_per_s": host_copy,
        "copy_baseline": {
            "bytes": sizes.baseline * sizes.baseline_reps,
            "seconds": copy_s,
            "gb_per_s": copy_gbps,
        },
        "import_window_bytes": sizes.load.import_window,
        "imports_in_flight": sizes.load.imports_in_flight,
        "copy_threads": sizes.load.copy_threads,
        "import_threads": sizes.load.import_threads,
        "hugepages": sizes.hugepages,
        "loads": paths,
    }))
}
