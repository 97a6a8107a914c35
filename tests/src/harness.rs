//! Replaying traces: timed, for efficiency, and checked; statistics, table and JSON report.
//!
//! Timing: the ops of `fixed256` and `random` are replayed in batches of
//! [`PAIRS_PER_BATCH`](crate::traces::PAIRS_PER_BATCH) pairs (two ops each), each batch timed
//! with [`Instant`]. `median_ns_per_pair` and `p99_ns_per_pair` are the median and the 99th
//! percentile *over batches* of the batch time divided by the pairs in it: a p99 is a slow
//! batch of 64 pairs, not a single slow operation. The first
//! [`warmup_batches`](crate::traces::TraceConfig::warmup_batches) are not counted.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::adapter::BenchAllocator;
use crate::traces::{Op, Trace, TraceKind};

/// The `p`-th percentile (nearest rank) of `values`, which it sorts. `NaN` when empty.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// Result of a timed replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Median over batches of ns per pair.
    pub median_ns_per_pair: f64,
    /// 99th percentile over batches of ns per pair.
    pub p99_ns_per_pair: f64,
    /// Allocations that failed (prefill included); should be zero.
    pub failures: u64,
}

#[inline(always)]
fn apply<A: BenchAllocator>(alloc: &mut A, handles: &mut [Option<A::Handle>], op: Op) -> bool {
    match op {
        Op::Alloc { slot, size, align } => {
            let h = alloc.alloc(u64::from(size), u64::from(align));
            let ok = h.is_some();
            handles[slot as usize] = h;
            ok
        }
        Op::Free { slot } => {
            if let Some(h) = handles[slot as usize].take() {
                alloc.free(h);
            }
            true
        }
    }
}

/// Replays `trace` (`fixed256` or `random`) on `alloc`, timing batches.
pub fn replay_timed<A: BenchAllocator>(alloc: &mut A, trace: &Trace) -> Timing {
    let cfg = &trace.config;
    let mut handles: Vec<Option<A::Handle>> = vec![None; trace.slots];
    let mut failures = 0u64;
    for &op in &trace.prefill {
        failures += u64::from(!apply(alloc, &mut handles, op));
    }
    let per_batch = cfg.ops_per_batch();
    let pairs = f64::from(cfg.pairs_per_batch);
    let mut samples = Vec::with_capacity(trace.ops.len() / per_batch);
    for (i, batch) in trace.ops.chunks_exact(per_batch).enumerate() {
        let mut failed = 0u32;
        let t = Instant::now();
        for &op in batch {
            failed += u32::from(!apply(alloc, &mut handles, black_box(op)));
        }
        let ns = t.elapsed().as_nanos() as f64;
        failures += u64::from(failed);
        if i >= cfg.warmup_batches as usize {
            samples.push(ns / pairs);
        }
    }
    black_box(&handles);
    for h in handles.iter_mut().filter_map(Option::take) {
        alloc.free(h);
    }
    let median_ns_per_pair = percentile(&mut samples, 50.0);
    let p99_ns_per_pair = percentile(&mut samples, 99.0);
    Timing {
        median_ns_per_pair,
        p99_ns_per_pair,
        failures,
    }
}

/// Result of an efficiency replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Efficiency {
    /// Requested bytes of the live blocks at the first failure, over the block size, in %.
    pub efficiency_pct: f64,
    /// Live blocks at the first failure.
    pub live_blocks: usize,
    /// Why the allocation failed, where the allocator says.
    pub error: Option<String>,
}

/// Replays an `efficiency` trace on `alloc` until the first allocation fails.
///
/// # Panics
/// If no allocation fails (the generator makes the trace long enough that one must).
pub fn replay_efficiency<A: BenchAllocator>(alloc: &mut A, trace: &Trace) -> Efficiency {
    let mut handles: Vec<Option<A::Handle>> = vec![None; trace.slots];
    let mut sizes = vec![0u64; trace.slots];
    let mut live_bytes = 0u64;
    let mut live_blocks = 0usize;
    for &op in &trace.ops {
        match op {
            Op::Alloc { slot, size, align } => {
                let Some(h) = alloc.alloc(u64::from(size), u64::from(align)) else {
                    let efficiency_pct = live_bytes as f64 / alloc.capacity() as f64 * 100.0;
                    let error = alloc.last_error();
                    for h in handles.iter_mut().filter_map(Option::take) {
                        alloc.free(h);
                    }
                    return Efficiency {
                        efficiency_pct,
                        live_blocks,
                        error,
                    };
                };
                handles[slot as usize] = Some(h);
                sizes[slot as usize] = u64::from(size);
                live_bytes += u64::from(size);
                live_blocks += 1;
            }
            Op::Free { slot } => {
                let h = handles[slot as usize]
                    .take()
                    .expect("trace frees a live slot");
                alloc.free(h);
                live_bytes -= sizes[slot as usize];
                live_blocks -= 1;
            }
        }
    }
    panic!(
        "{}: no allocation failed in the efficiency trace",
        alloc.name()
    );
}

/// What a checked replay saw.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// Successful allocations.
    pub allocations: u64,
    /// Frees.
    pub frees: u64,
    /// Failed allocations (for `efficiency`: the one that ended it).
    pub failures: u64,
    /// For `efficiency`: the figure at the first failure.
    pub efficiency_pct: Option<f64>,
}

/// Replays `trace` on `alloc` with checks after every op: each allocation lies inside the
/// block, is aligned as asked, and overlaps no live allocation. Stops at the first failed
/// allocation for `efficiency`; for the other traces a failure is reported in `failures`.
pub fn replay_checked<A: BenchAllocator>(
    alloc: &mut A,
    trace: &Trace,
) -> Result<CheckReport, String> {
    let name = alloc.name();
    let cap = alloc.capacity();
    let mut handles: Vec<Option<A::Handle>> = vec![None; trace.slots];
    let mut sizes = vec![0u64; trace.slots];
    // start -> end of live allocations
    let mut live: BTreeMap<u64, u64> = BTreeMap::new();
    let mut live_bytes = 0u64;
    let mut report = CheckReport {
        allocations: 0,
        frees: 0,
        failures: 0,
        efficiency_pct: None,
    };
    for &op in trace.prefill.iter().chain(&trace.ops) {
        match op {
            Op::Alloc { slot, size, align } => {
                let (size, align) = (u64::from(size), u64::from(align));
                let Some(h) = alloc.alloc(size, align) else {
                    report.failures += 1;
                    if trace.config.kind == TraceKind::Efficiency {
                        report.efficiency_pct = Some(live_bytes as f64 / cap as f64 * 100.0);
                        break;
                    }
                    continue;
                };
                let start = alloc.offset(&h);
                let end = start + size;
                if end > cap {
                    return Err(format!("{name}: {start}..{end} outside the block of {cap}"));
                }
                if start % align != 0 {
                    return Err(format!("{name}: offset {start} not aligned to {align}"));
                }
                if let Some((&s, &e)) = live.range(..end).next_back() {
                    if e > start {
                        return Err(format!("{name}: {start}..{end} overlaps live {s}..{e}"));
                    }
                }
                live.insert(start, end);
                handles[slot as usize] = Some(h);
                sizes[slot as usize] = size;
                live_bytes += size;
                report.allocations += 1;
            }
            Op::Free { slot } => {
                // A slot whose allocation failed is empty; the timed replay skips it too.
                if let Some(h) = handles[slot as usize].take() {
                    let start = alloc.offset(&h);
                    live.remove(&start)
                        .ok_or_else(|| format!("{name}: {start} not live"))?;
                    alloc.free(h);
                    live_bytes -= sizes[slot as usize];
                    report.frees += 1;
                }
            }
        }
    }
    for h in handles.iter_mut().filter_map(Option::take) {
        alloc.free(h);
    }
    Ok(report)
}

/// One line of the report. Figures that do not apply are `null` in the JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `fixed256`, `random`, `efficiency` or `arena_alloc`.
    pub trace: String,
    /// The allocator's name.
    pub allocator: String,
    /// Median over batches of ns per pair (for `arena_alloc`: ns per `allocate`).
    pub median_ns_per_pair: Option<f64>,
    /// 99th percentile over batches of 64 pairs of ns per pair.
    pub p99_ns_per_pair: Option<f64>,
    /// The median less the same run's baseline median on the same trace: what the allocator
    /// itself costs (set by [`net_of_baseline`]).
    pub net_ns_per_pair: Option<f64>,
    /// Heap efficiency in % (`efficiency` only).
    pub efficiency_pct: Option<f64>,
}

/// Sets every timed row's [`Row::net_ns_per_pair`] from the [`baseline`](crate::baseline) row
/// of its trace (rows of traces without one keep `None`).
pub fn net_of_baseline(rows: &mut [Row]) {
    let baselines: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.allocator == crate::baseline::NAME)
        .filter_map(|r| Some((r.trace.clone(), r.median_ns_per_pair?)))
        .collect();
    for row in rows.iter_mut() {
        let base = baselines.iter().find(|(t, _)| *t == row.trace);
        row.net_ns_per_pair = match (row.median_ns_per_pair, base) {
            (Some(m), Some((_, b))) => Some(m - b),
            _ => None,
        };
    }
}

/// For every row, its figure (median time, or efficiency) over the best peer's on the same
/// trace: below 1 is faster (time); above 1 is more efficient (efficiency). With `net`, the
/// times are net of the baseline ([`Row::net_ns_per_pair`]).
pub fn ratios_vs_best_peer(rows: &[Row], peers: &[&str], net: bool) -> Vec<Option<f64>> {
    let time = |r: &Row| {
        if net {
            r.net_ns_per_pair
        } else {
            r.median_ns_per_pair
        }
    };
    let best = |trace: &str| -> (Option<f64>, Option<f64>) {
        let peer_rows = rows
            .iter()
            .filter(|r| r.trace == trace && peers.contains(&r.allocator.as_str()));
        let fastest = peer_rows.clone().filter_map(time).min_by(f64::total_cmp);
        let eff = peer_rows
            .filter_map(|r| r.efficiency_pct)
            .max_by(f64::total_cmp);
        (fastest, eff)
    };
    rows.iter()
        .map(|r| {
            if r.allocator == crate::baseline::NAME {
                return None;
            }
            let (fastest, eff) = best(&r.trace);
            match (time(r), r.efficiency_pct) {
                (Some(m), _) => fastest.map(|t| m / t),
                (None, Some(e)) if !net => eff.map(|b| e / b),
                _ => None,
            }
        })
        .collect()
}

/// The report as a text table.
pub fn format_table(rows: &[Row], peers: &[&str]) -> String {
    use std::fmt::Write;
    let fmt = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
    };
    let ratio = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}x"));
    let raw = ratios_vs_best_peer(rows, peers, false);
    let net = ratios_vs_best_peer(rows, peers, true);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:<24} {:>14} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "trace",
        "allocator",
        "median ns/pair",
        "p99 ns/pair",
        "net ns/pair",
        "efficiency %",
        "vs peer raw",
        "vs peer net"
    );
    let _ = writeln!(out, "{}", "-".repeat(130));
    for ((r, raw), net) in rows.iter().zip(raw).zip(net) {
        let _ = writeln!(
            out,
            "{:<24} {:<24} {:>14} {:>12} {:>12} {:>12} {:>12} {:>12}",
            r.trace,
            r.allocator,
            fmt(r.median_ns_per_pair, 2),
            fmt(r.p99_ns_per_pair, 2),
            fmt(r.net_ns_per_pair, 2),
            fmt(r.efficiency_pct, 2),
            ratio(raw),
            ratio(net),
        );
    }
    out
}

/// Where the JSON report goes: `$CARGO_TARGET_DIR/bench/alloc.json` if that is set (a
/// relative one is taken from the workspace root), else `<workspace>/target/bench/alloc.json`.
pub fn json_path() -> PathBuf {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    };
    target.join("bench").join("alloc.json")
}

/// Writes `rows` as a JSON list to `path`, creating its directory.
pub fn write_json(rows: &[Row], path: &std::path::Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_string_pretty(rows).map_err(std::io::Error::other)?;
    std::fs::write(path, json + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut v, 50.0), 50.0);
        assert_eq!(percentile(&mut v, 99.0), 99.0);
        assert_eq!(percentile(&mut v, 100.0), 100.0);
        assert!(percentile(&mut [], 50.0).is_nan());
    }
}
