//! HAL benchmark on the local driver: dispatch replay, queue-ordered allocation, and what
//! memoizing a command buffer buys.
//!
//! `cargo bench -p ember-tests --bench hal` (`EMBER_BENCH_QUICK=1` for a tiny run; `-- --check`
//! to fail when a figure passes its bound in [`BOUNDS`]). Prints a table and writes
//! `target/bench/hal.json`. Every figure is measured against a baseline in the same process,
//! the two timed alternately, batch by batch, so that both see the same machine; each is the
//! median over batches, and the run repeats that [`ROUNDS`] times, reporting the median round.
//! The figures and their baselines:
//! - `replay`: a memoized reusable command buffer of 1,000 `noop` dispatches (1×1×1) submitted
//!   again and again, per dispatch — against calling the kernel's function pointer directly
//!   1,000 times (the floor: what any runtime must pay to reach the kernel);
//! - `alloca`, `alloca_semaphore`: `queue_alloca` + `queue_dealloca` of 4 KiB, a pair with no
//!   semaphores, and a pair ordered by a timeline semaphore (alloca signals it, dealloca waits
//!   on it) — against an allocate + free pair on a bare `Arena` of the device's kind and size
//!   (the device's transient arena, which `queue_alloca` allocates from);
//! - `memo_replay`: 16 dispatches with 2 constants and 3 bindings each, replayed from a
//!   memoized reusable command buffer (cache lookup, binding table of 3 slots), per dispatch —
//!   against calling the kernel directly with the same constants and bindings made from three
//!   word slices of the buffers' size;
//! - `memo_gain`: the same replay against recording the 16 dispatches into a one-shot command
//!   buffer and submitting it (what memoizing saves; its ratio is the inverse of the gain).
//!
//! A general-heap `Tlsf` pair is printed for scale.

use std::hint::black_box;
use std::sync::atomic::AtomicU32;
use std::time::Instant;

use hal_core::command::{CommandBufferMode, Record, Workgroups};
use hal_core::memory::alloc::{Arena, RangeAllocator, Tlsf};
use hal_core::memory::BufferParams;
use hal_core::{
    BufferRef, BufferSpan, CommandBuffer, Device, ExecutableSource, MemoCache, MemoKey,
    QueueAffinity, SemaphoreValue, Submit,
};
use hal_local::kernel::{Binding, Workgroup};
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

type Dev = LocalDevice<'static>;

/// The most a checked figure may cost, as a multiple of its same-run baseline; `--check`
/// fails when even the best of its rounds is past the bound.
///
/// Ratios rather than nanoseconds, so that a slower or busier machine does not trip the check:
/// the baseline runs in the same process, interleaved batch by batch with the figure. They
/// do not cancel every effect of a busy machine, though: on the shared 2-core x86-64 VM
/// (AMD EPYC, load 5–10 from other builds) about one process in four runs the driver up to
/// 1.4× slower while the arena's tight loop keeps its speed, so the allocation ratios have a
/// slow mode. Each bound is about 1.4× the worst best-round ratio the fast driver (replay at
/// ~9 ns per dispatch, the alloca pair at ~45 ns) showed there over 50 processes, and at most
/// about 2.3× its usual ratio, so a figure three times slower fails in any mode. The ratios
/// measured, usual (slow mode) → bound:
pub const BOUNDS: &[Bound] = &[
    // 2.8–3.95 (two processes lower, their baseline slowed) → 5.5.
    Bound {
        figure: "replay",
        max: 5.5,
        why: "replaying a recorded dispatch is a few direct kernel calls' worth: the slot walk, \
              the executable look-up, the workgroup loop",
    },
    // 3.6–4.6 (5.2–6.2) → 8.5.
    Bound {
        figure: "alloca",
        max: 8.5,
        why: "a queue-ordered pair is the arena pair plus a buffer record into and out of the \
              handle table and two immediate submissions",
    },
    // 4.4–5.7 (6.5–8.0) → 11.
    Bound {
        figure: "alloca_semaphore",
        max: 11.0,
        why: "as `alloca`, plus one timeline signal and one satisfied wait",
    },
    // 4.4–6.3 → 9.
    Bound {
        figure: "memo_replay",
        max: 9.0,
        why: "a replayed dispatch resolves three binding-table slots (generation-checked \
              look-ups, usage and range checks) before the kernel call",
    },
    // 0.51–0.55 → 0.8.
    Bound {
        figure: "memo_gain",
        max: 0.8,
        why: "replaying a memoized command buffer must stay well below recording and \
              submitting the same dispatches, or memoizing buys nothing",
    },
];

/// A bound on one figure's ratio to its baseline.
pub struct Bound {
    /// The figure's key (as in `hal.json`'s `checks`).
    pub figure: &'static str,
    /// The largest ratio that passes.
    pub max: f64,
    /// What the figure pays on top of its baseline, for the failure message.
    pub why: &'static str,
}

/// Rounds of measurement; figures and ratios are the median round.
const ROUNDS: usize = 7;

/// Median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Nanoseconds per unit of one call of `f`, which does `units` units of work.
fn timed<S>(state: &mut S, units: u64, f: &mut impl FnMut(&mut S)) -> f64 {
    let start = Instant::now();
    f(state);
    start.elapsed().as_nanos() as f64 / units as f64
}

/// Median ns per unit of `figure` and of `baseline`, over `batches` batches of each, timed
/// alternately after a warm-up.
fn compare<S>(
    batches: usize,
    state: &mut S,
    (figure_units, mut figure): (u64, impl FnMut(&mut S)),
    (baseline_units, mut baseline): (u64, impl FnMut(&mut S)),
) -> (f64, f64) {
    for _ in 0..batches / 10 + 1 {
        figure(state);
        baseline(state);
    }
    let mut f = Vec::with_capacity(batches);
    let mut b = Vec::with_capacity(batches);
    for _ in 0..batches {
        f.push(timed(state, figure_units, &mut figure));
        b.push(timed(state, baseline_units, &mut baseline));
    }
    (median(&mut f), median(&mut b))
}

/// Median ns per unit of `f`, which does `units` units of work, over `batches` batches.
fn time(batches: usize, units: u64, mut f: impl FnMut()) -> f64 {
    for _ in 0..batches / 10 + 1 {
        f();
    }
    let mut samples: Vec<f64> = (0..batches)
        .map(|_| timed(&mut (), units, &mut |_| f()))
        .collect();
    median(&mut samples)
}

/// One figure beside its baseline, over every round.
struct Row {
    key: &'static str,
    what: &'static str,
    unit: &'static str,
    baseline: &'static str,
    /// (figure ns, baseline ns) per round.
    rounds: Vec<(f64, f64)>,
}

impl Row {
    fn new(
        key: &'static str,
        what: &'static str,
        unit: &'static str,
        baseline: &'static str,
    ) -> Self {
        Self {
            key,
            what,
            unit,
            baseline,
            rounds: Vec::new(),
        }
    }

    fn ratios(&self) -> Vec<f64> {
        self.rounds.iter().map(|(f, b)| f / b).collect()
    }

    fn ns(&self) -> f64 {
        median(&mut self.rounds.iter().map(|r| r.0).collect::<Vec<_>>())
    }

    fn baseline_ns(&self) -> f64 {
        median(&mut self.rounds.iter().map(|r| r.1).collect::<Vec<_>>())
    }

    fn ratio(&self) -> f64 {
        median(&mut self.ratios())
    }

    /// The lowest round's ratio: what `--check` holds against the bound. A slower path is
    /// slower in every round; a busy machine seldom slows all of them.
    fn best_ratio(&self) -> f64 {
        self.ratios().into_iter().fold(f64::INFINITY, f64::min)
    }

    fn bound(&self) -> Option<f64> {
        self.bound_entry().map(|b| b.max)
    }

    fn bound_entry(&self) -> Option<&'static Bound> {
        BOUNDS.iter().find(|b| b.figure == self.key)
    }

    /// Why the figure fails its bound, or `None` when it passes (or has none).
    fn failure(&self) -> Option<String> {
        let bound = self.bound_entry()?;
        let rounds: Vec<String> = self.ratios().iter().map(|r| format!("{r:.2}")).collect();
        (self.best_ratio() > bound.max).then(|| {
            format!(
                "{}: {} at {:.1} {} is {:.2}x its baseline ({}, {:.1} ns), {:.2}x in its best \
                 round; bound {}x ({}); ratio in every round: {}",
                self.key,
                self.what.trim(),
                self.ns(),
                self.unit,
                self.ratio(),
                self.baseline,
                self.baseline_ns(),
                self.best_ratio(),
                bound.max,
                bound.why,
                rounds.join(", ")
            )
        })
    }
}

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    let quick = !check && std::env::var_os("EMBER_BENCH_QUICK").is_some();
    let (batches, rounds) = if quick { (20, 1) } else { (1_000, ROUNDS) };
    let memory: &'static mut [u8] = Box::leak(vec![0u8; 16 << 20].into_boxed_slice());
    let config = LocalConfig {
        transient_bytes: 4 << 20,
        ..LocalConfig::default()
    };
    let storage: &'static mut LocalStorage = Box::leak(Box::new(LocalStorage::EMPTY));
    let mut dev: Box<Dev> = Box::new(LocalDevice::new(storage, memory, config).expect("device"));
    let noop = dev
        .load_executable(ExecutableSource::Kernel("noop"))
        .expect("noop kernel");
    let entry = hal_local::kernels::find(hal_local::kernels::BUILTIN, "noop")
        .and_then(|k| k.shared())
        .expect("noop");
    let mut memo = MemoCache::<CommandBuffer, 4>::new();
    let key = |resource| MemoKey {
        device: dev.id(),
        affinity: QueueAffinity::ANY,
        resource,
    };
    let (key_1000, key_16) = (key(1000), key(16));

    // Replay: 1,000 dispatches, recorded once.
    let direct = Record::Dispatch {
        executable: noop,
        workgroups: Workgroups::Direct([1, 1, 1]),
        constants: &[],
        bindings: &[],
    };
    memo.get_or_try_insert(key_1000, || {
        let cb = dev.create_command_buffer(CommandBufferMode::Reusable, 1000, 0)?;
        for _ in 0..1000 {
            dev.record(cb, direct)?;
        }
        dev.end(cb)?;
        Ok(cb)
    })
    .expect("record 1,000 dispatches");

    // Queue-ordered allocation, and the allocators underneath.
    let params = BufferParams::device_local();
    const PAIRS: u64 = 100;
    let sem = dev.create_semaphore(0).expect("semaphore");
    let mut value = 0u64;
    let mut arena = Arena::<64>::new(4 << 20);
    let mut tlsf = Tlsf::<256>::new(12 << 20);

    // 16 dispatches with 3 bindings: a one-shot recording against the memoized twin.
    const WORDS: usize = 256;
    let buffers: Vec<_> = (0..3)
        .map(|_| {
            dev.allocate_buffer(params, 4 * WORDS as u64)
                .expect("buffer")
        })
        .collect();
    let spans: Vec<_> = buffers.iter().map(|&b| BufferSpan::whole(b)).collect();
    let direct_refs: Vec<_> = buffers.iter().map(|&b| BufferRef::buffer(b)).collect();
    let slot_refs = [BufferRef::slot(0), BufferRef::slot(1), BufferRef::slot(2)];
    const CONSTANTS: [u32; 2] = [64, 1];
    let dispatch = |bindings| Record::Dispatch {
        executable: noop,
        workgroups: Workgroups::Direct([1, 1, 1]),
        constants: &CONSTANTS,
        bindings,
    };
    memo.get_or_try_insert(key_16, || {
        let cb = dev.create_command_buffer(CommandBufferMode::Reusable, 96, 3)?;
        for _ in 0..16 {
            dev.record(cb, dispatch(&slot_refs))?;
        }
        dev.end(cb)?;
        Ok(cb)
    })
    .expect("memoize 16");
    let words: [Vec<AtomicU32>; 3] =
        std::array::from_fn(|_| (0..WORDS).map(|_| AtomicU32::new(0)).collect());

    let mut rows = [
        Row::new(
            "replay",
            "replay of 1,000 noop dispatches",
            "ns/dispatch",
            "direct fn call",
        ),
        Row::new(
            "alloca",
            "queue_alloca + queue_dealloca",
            "ns/pair",
            "Arena pair",
        ),
        Row::new(
            "alloca_semaphore",
            "  ordered by a semaphore",
            "ns/pair",
            "Arena pair",
        ),
        Row::new(
            "memo_replay",
            "16 dispatches: memoized replay",
            "ns/dispatch",
            "direct, 3 bindings",
        ),
        Row::new(
            "memo_gain",
            "16 dispatches: memoized replay",
            "ns/dispatch",
            "record + submit",
        ),
    ];
    let mut tlsf_ns = Vec::new();
    for _ in 0..rounds {
        let replay = compare(
            batches / 4,
            &mut *dev,
            (1000, |dev: &mut Dev| {
                let cb = memo.get(&key_1000).expect("memoized");
                dev.queue_execute(Submit::NOW, cb, &[]).expect("replay");
            }),
            (1000, |_: &mut Dev| {
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
            }),
        );
        let arena_pairs = |_: &mut Dev| {
            for _ in 0..PAIRS {
                let r = arena.allocate(black_box(4096), 16).expect("arena");
                arena.free(black_box(r)).expect("arena free");
            }
        };
        let alloca = compare(
            batches,
            &mut *dev,
            (PAIRS, |dev: &mut Dev| {
                for _ in 0..PAIRS {
                    let b = dev.queue_alloca(Submit::NOW, params, 4096).expect("alloca");
                    dev.queue_dealloca(Submit::NOW, b).expect("dealloca");
                }
            }),
            (PAIRS, arena_pairs),
        );
        let arena_pairs = |_: &mut Dev| {
            for _ in 0..PAIRS {
                let r = arena.allocate(black_box(4096), 16).expect("arena");
                arena.free(black_box(r)).expect("arena free");
            }
        };
        let alloca_semaphore = compare(
            batches,
            &mut *dev,
            (PAIRS, |dev: &mut Dev| {
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
            }),
            (PAIRS, arena_pairs),
        );
        let memo_replay = |dev: &mut Dev| {
            let cb = memo.get(&key_16).expect("memoized");
            dev.queue_execute(Submit::NOW, cb, &spans).expect("replay");
        };
        let memo_direct = compare(
            batches,
            &mut *dev,
            (16, memo_replay),
            (16, |_: &mut Dev| {
                let kernel = black_box(entry);
                for _ in 0..16 {
                    let bindings = words
                        .each_ref()
                        .map(|w| Binding::words(black_box(w), 4 * WORDS, true));
                    let wg = Workgroup {
                        id: [0; 3],
                        count: [1; 3],
                        constants: black_box(&CONSTANTS),
                        bindings: &bindings,
                    };
                    kernel(black_box(&wg)).expect("noop");
                }
            }),
        );
        let memo_gain = compare(
            batches,
            &mut *dev,
            (16, memo_replay),
            (16, |dev: &mut Dev| {
                let cb = dev
                    .create_command_buffer(CommandBufferMode::OneShot, 96, 0)
                    .expect("cb");
                for _ in 0..16 {
                    dev.record(cb, dispatch(&direct_refs)).expect("record");
                }
                dev.end(cb).expect("end");
                dev.queue_execute(Submit::NOW, cb, &[]).expect("submit");
                dev.release_command_buffer(cb).expect("release");
            }),
        );
        for (row, measured) in
            rows.iter_mut()
                .zip([replay, alloca, alloca_semaphore, memo_direct, memo_gain])
        {
            row.rounds.push(measured);
        }
        tlsf_ns.push(time(batches, PAIRS, || {
            for _ in 0..PAIRS {
                let r = tlsf.allocate(black_box(4096), 16).expect("tlsf");
                tlsf.free(black_box(r)).expect("tlsf free");
            }
        }));
    }
    let tlsf_ns = median(&mut tlsf_ns);

    println!(
        "\nHAL benchmark, local driver (inline): {}, each the median over batches{}",
        if rounds == 1 {
            "1 round".to_string()
        } else {
            format!("median of {rounds} rounds")
        },
        if check { " (--check)" } else { "" }
    );
    println!(
        "{:<34} {:>8} {:>12} {:>19} {:>8} {:>7} {:>7} {:>7}  ratio per round",
        "measure", "ns", "unit", "baseline", "ns", "ratio", "best", "bound"
    );
    for row in &rows {
        let bound = row.bound().map_or("-".to_string(), |b| format!("≤{b}"));
        let per_round: Vec<String> = row.ratios().iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "{:<34} {:>8.1} {:>12} {:>19} {:>8.1} {:>7.2} {:>7.2} {bound:>7}  {}",
            row.what,
            row.ns(),
            row.unit,
            row.baseline,
            row.baseline_ns(),
            row.ratio(),
            row.best_ratio(),
            per_round.join(" ")
        );
    }
    let [replay, alloca, alloca_semaphore, memo_direct, memo_gain] = &rows;
    println!(
        "memoization gain (record+submit / replay, 16 dispatches): {:.1}x",
        1.0 / memo_gain.ratio()
    );
    println!("for scale: a Tlsf pair (the general heap's allocator) {tlsf_ns:.1} ns; IREE's local executable benchmark reports 90.7 ns per dispatch; IREE's CUDA queue_alloca about 5 µs per invocation");

    let failures: Vec<String> = rows.iter().filter_map(Row::failure).collect();
    let checks: Vec<_> = rows
        .iter()
        .map(|row| {
            serde_json::json!({
                "figure": row.key,
                "what": row.what.trim(),
                "unit": row.unit,
                "ns": row.ns(),
                "baseline": row.baseline,
                "baseline_ns": row.baseline_ns(),
                "ratio": row.ratio(),
                "ratio_per_round": row.ratios(),
                "bound": row.bound(),
                "best_ratio": row.best_ratio(),
                "within_bound": row.failure().is_none(),
                "failure": row.failure(),
            })
        })
        .collect();
    let json = serde_json::json!({
        "device": "hal-local, inline",
        "batches": batches,
        "rounds": rounds,
        "dispatch_replay_ns_per_dispatch": replay.ns(),
        "direct_call_ns": replay.baseline_ns(),
        "queue_alloca_dealloca_ns_per_pair": alloca.ns(),
        "queue_alloca_dealloca_with_semaphore_ns_per_pair": alloca_semaphore.ns(),
        "arena_pair_ns": alloca.baseline_ns(),
        "tlsf_pair_ns": tlsf_ns,
        "record_submit_16_ns_per_dispatch": memo_gain.baseline_ns(),
        "replay_16_ns_per_dispatch": memo_gain.ns(),
        "direct_call_3_bindings_ns": memo_direct.baseline_ns(),
        "memoization_gain": 1.0 / memo_gain.ratio(),
        "targets": {"dispatch_replay_ns": 20.0, "alloca_pair_ns": 50.0},
        "checks": checks,
    });
    let path = ember_tests::harness::json_path().with_file_name("hal.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(&path, serde_json::to_string_pretty(&json).expect("json")).expect("write");
    println!("wrote {}", path.display());
    for b in buffers {
        dev.release_buffer(b).expect("release");
    }
    if check {
        if failures.is_empty() {
            println!("hal bench check: every ratio within its bound");
        } else {
            eprintln!("\nhal bench check FAILED: a figure passed its bound (tests/benches/hal.rs, BOUNDS)");
            for failure in &failures {
                eprintln!("  {failure}");
            }
            std::process::exit(1);
        }
    }
}
