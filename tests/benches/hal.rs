//! HAL benchmark on the local driver: dispatch replay, queue-ordered allocation, and what
//! memoizing a command buffer buys.
//!
//! `cargo bench -p ember-tests --bench hal` (`EMBER_BENCH_QUICK=1` for a tiny run). Prints a
//! table and writes `target/bench/hal.json`. Every figure is the median over batches, and each
//! is printed beside a baseline measured in the same process:
//! - replay: a memoized reusable command buffer of 1,000 `noop` dispatches (1×1×1) submitted
//!   again and again, per dispatch — against calling the kernel's function pointer directly
//!   1,000 times (the floor: what any runtime must pay to reach the kernel);
//! - `queue_alloca` + `queue_dealloca`: a pair with no semaphores, and a pair ordered by a
//!   timeline semaphore (alloca signals it, dealloca waits on it) — against the bare
//!   allocators underneath (the device's `Arena` and a `Tlsf`);
//! - 16 dispatches with 3 bindings each: recording a one-shot command buffer and submitting
//!   it, against replaying its memoized reusable twin with a binding table.

use std::hint::black_box;
use std::time::Instant;

use hal_core::command::{CommandBufferMode, Record, Workgroups};
use hal_core::memory::alloc::{Arena, RangeAllocator, Tlsf};
use hal_core::memory::BufferParams;
use hal_core::{
    BufferRef, BufferSpan, CommandBuffer, Device, ExecutableSource, MemoCache, MemoKey,
    QueueAffinity, SemaphoreValue, Submit,
};
use hal_local::kernel::Workgroup;
use hal_local::{LocalConfig, LocalDevice};

type Dev = LocalDevice<'static, 64, 4096, 256, 16>;

/// Median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `f` (which does `per_call` units of work) `batches` times after a warm-up, returning
/// the median ns per unit.
fn time(batches: usize, per_call: u64, mut f: impl FnMut()) -> f64 {
    for _ in 0..batches / 10 + 1 {
        f();
    }
    let mut samples: Vec<f64> = (0..batches)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64 / per_call as f64
        })
        .collect();
    median(&mut samples)
}

fn main() {
    let quick = std::env::var_os("EMBER_BENCH_QUICK").is_some();
    let batches = if quick { 20 } else { 2_000 };
    let memory: &'static mut [u8] = Box::leak(vec![0u8; 16 << 20].into_boxed_slice());
    let config = LocalConfig {
        transient_bytes: 4 << 20,
        ..LocalConfig::default()
    };
    let mut dev: Box<Dev> = Box::new(LocalDevice::new(memory, config).expect("device"));
    let noop = dev
        .load_executable(ExecutableSource::Kernel("noop"))
        .expect("noop kernel");
    let mut memo = MemoCache::<CommandBuffer, 4>::new();
    let key = |resource| MemoKey {
        device: dev.id(),
        affinity: QueueAffinity::ANY,
        resource,
    };
    let (key_1000, key_16) = (key(1000), key(16));

    // 1. Replay of 1,000 dispatches.
    let direct = Record::Dispatch {
        executable: noop,
        workgroups: Workgroups::Direct([1, 1, 1]),
        constants: &[],
        bindings: &[],
    };
    let cb = memo
        .get_or_try_insert(key_1000, || {
            let cb = dev.create_command_buffer(CommandBufferMode::Reusable, 1000, 0)?;
            for _ in 0..1000 {
                dev.record(cb, direct)?;
            }
            dev.end(cb)?;
            Ok(cb)
        })
        .expect("record 1,000 dispatches");
    let replay_ns = time(batches / 4, 1000, || {
        let cb = memo.get(&key_1000).expect("memoized");
        dev.queue_execute(Submit::NOW, cb, &[]).expect("replay");
    });
    let entry = hal_local::kernels::find(hal_local::kernels::BUILTIN, "noop")
        .expect("noop")
        .entry;
    let direct_ns = time(batches / 4, 1000, || {
        let kernel = black_box(entry);
        for _ in 0..1000 {
            let wg = Workgroup {
                id: [0; 3],
                count: [1; 3],
                constants: &[],
                bindings: &[],
            };
            kernel(black_box(&wg)).expect("noop");
        }
    });
    let _ = cb;

    // 2. Queue-ordered allocation.
    let params = BufferParams::device_local();
    const PAIRS: u64 = 100;
    let alloca_ns = time(batches, PAIRS, || {
        for _ in 0..PAIRS {
            let b = dev.queue_alloca(Submit::NOW, params, 4096).expect("alloca");
            dev.queue_dealloca(Submit::NOW, b).expect("dealloca");
        }
    });
    let sem = dev.create_semaphore(0).expect("semaphore");
    let mut value = 0u64;
    let alloca_sem_ns = time(batches, PAIRS, || {
        for _ in 0..PAIRS {
            value += 1;
            let ready = [SemaphoreValue::new(sem, value)];
            let b = dev
                .queue_alloca(Submit::new(&[], &ready), params, 4096)
                .expect("alloca");
            value += 1;
            let done = [SemaphoreValue::new(sem, value)];
            dev.queue_dealloca(Submit::new(&ready, &done), b)
                .expect("dealloca");
        }
    });
    let mut arena = Arena::<64>::new(4 << 20);
    let arena_ns = time(batches, PAIRS, || {
        for _ in 0..PAIRS {
            let r = arena.allocate(black_box(4096), 16).expect("arena");
            arena.free(black_box(r)).expect("arena free");
        }
    });
    let mut tlsf = Tlsf::<256>::new(12 << 20);
    let tlsf_ns = time(batches, PAIRS, || {
        for _ in 0..PAIRS {
            let r = tlsf.allocate(black_box(4096), 16).expect("tlsf");
            tlsf.free(black_box(r)).expect("tlsf free");
        }
    });

    // 3. Record-and-submit of 16 dispatches against replaying the memoized twin.
    let buffers: Vec<_> = (0..3)
        .map(|_| dev.allocate_buffer(params, 1024).expect("buffer"))
        .collect();
    let spans: Vec<_> = buffers.iter().map(|&b| BufferSpan::whole(b)).collect();
    let direct_refs: Vec<_> = buffers.iter().map(|&b| BufferRef::buffer(b)).collect();
    let slot_refs = [BufferRef::slot(0), BufferRef::slot(1), BufferRef::slot(2)];
    let dispatch = |bindings| Record::Dispatch {
        executable: noop,
        workgroups: Workgroups::Direct([1, 1, 1]),
        constants: &[64, 1],
        bindings,
    };
    let one_shot_ns = time(batches, 16, || {
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 96, 0)
            .expect("cb");
        for _ in 0..16 {
            dev.record(cb, dispatch(&direct_refs)).expect("record");
        }
        dev.end(cb).expect("end");
        dev.queue_execute(Submit::NOW, cb, &[]).expect("submit");
        dev.release_command_buffer(cb).expect("release");
    });
    memo.get_or_try_insert(key_16, || {
        let cb = dev.create_command_buffer(CommandBufferMode::Reusable, 96, 3)?;
        for _ in 0..16 {
            dev.record(cb, dispatch(&slot_refs))?;
        }
        dev.end(cb)?;
        Ok(cb)
    })
    .expect("memoize 16");
    let replay16_ns = time(batches, 16, || {
        let cb = memo.get(&key_16).expect("memoized");
        dev.queue_execute(Submit::NOW, cb, &spans).expect("replay");
    });

    let rows = [
        (
            "replay of 1,000 noop dispatches",
            "ns/dispatch",
            replay_ns,
            "direct fn call",
            direct_ns,
            20.0,
        ),
        (
            "queue_alloca + queue_dealloca",
            "ns/pair",
            alloca_ns,
            "Arena pair",
            arena_ns,
            50.0,
        ),
        (
            "  ordered by a semaphore",
            "ns/pair",
            alloca_sem_ns,
            "Tlsf pair",
            tlsf_ns,
            50.0,
        ),
        (
            "16 dispatches: record + submit",
            "ns/dispatch",
            one_shot_ns,
            "memoized replay",
            replay16_ns,
            f64::NAN,
        ),
    ];
    println!("\nHAL benchmark, local driver (inline), median over {batches} batches");
    println!(
        "{:<34} {:>10} {:>12} {:>18} {:>10} {:>8} {:>8}",
        "measure", "ns", "unit", "baseline", "ns", "ratio", "target"
    );
    for (what, unit, ns, base, base_ns, target) in rows {
        let target = if target.is_nan() {
            "-".to_string()
        } else {
            format!("≤{target}")
        };
        println!(
            "{what:<34} {ns:>10.1} {unit:>12} {base:>18} {base_ns:>10.1} {:>8.2} {target:>8}",
            ns / base_ns
        );
    }
    println!(
        "memoization gain (record+submit / replay, 16 dispatches): {:.1}x",
        one_shot_ns / replay16_ns
    );
    println!("for scale: IREE's local executable benchmark reports 90.7 ns per dispatch; IREE's CUDA queue_alloca about 5 µs per invocation");

    let json = serde_json::json!({
        "device": "hal-local, inline",
        "batches": batches,
        "dispatch_replay_ns_per_dispatch": replay_ns,
        "direct_call_ns": direct_ns,
        "queue_alloca_dealloca_ns_per_pair": alloca_ns,
        "queue_alloca_dealloca_with_semaphore_ns_per_pair": alloca_sem_ns,
        "arena_pair_ns": arena_ns,
        "tlsf_pair_ns": tlsf_ns,
        "record_submit_16_ns_per_dispatch": one_shot_ns,
        "replay_16_ns_per_dispatch": replay16_ns,
        "memoization_gain": one_shot_ns / replay16_ns,
        "targets": {"dispatch_replay_ns": 20.0, "alloca_pair_ns": 50.0},
    });
    let path = ember_tests::harness::json_path().with_file_name("hal.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(&path, serde_json::to_string_pretty(&json).expect("json")).expect("write");
    println!("wrote {}", path.display());
    for b in buffers {
        dev.release_buffer(b).expect("release");
    }
}
