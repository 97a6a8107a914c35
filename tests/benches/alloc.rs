//! Allocator benchmark: Ember's allocators and four peers on the same traces.
//!
//! `cargo bench -p ember-tests --bench alloc` (`EMBER_BENCH_QUICK=1` for a tiny run,
//! `EMBER_BENCH_FILTER=talc,rlsf` to run only allocators whose name contains `talc` or `rlsf`,
//! `EMBER_BENCH_TRACE=fixed256` to run only that trace and `arena` for the arena). Prints
//! a table and writes `target/bench/alloc.json`. See the `ember_tests` crate documentation
//! for the traces, the peers and how the figures are taken.

use ember_tests::adapter::BenchAllocator;
use ember_tests::baseline::Baseline;
use ember_tests::harness::{self, Row};
use ember_tests::suite::{self, Visitor};
use ember_tests::traces::{Scale, Trace, TraceConfig, TraceKind};

struct Run<'a> {
    trace: &'a Trace,
    /// `EMBER_BENCH_FILTER`: run only allocators whose name contains one of its
    /// comma-separated parts.
    filter: Option<&'a str>,
    rows: Vec<Row>,
}

impl Visitor for Run<'_> {
    fn visit<A: BenchAllocator>(&mut self, mut alloc: A) {
        let kind = self.trace.config.kind;
        let name = alloc.name();
        if self.filter.is_some_and(|f| !matches(f, name)) && name != ember_tests::baseline::NAME {
            return;
        }
        let row = if kind == TraceKind::Efficiency {
            let e = harness::replay_efficiency(&mut alloc, self.trace);
            eprintln!(
                "  {:<12} {:<24} {:6.2}% with {} live; failed with: {}",
                kind.name(),
                name,
                e.efficiency_pct,
                e.live_blocks,
                e.error.as_deref().unwrap_or("(no reason given)")
            );
            Row {
                trace: kind.name().into(),
                allocator: name.into(),
                median_ns_per_pair: None,
                p99_ns_per_pair: None,
                net_ns_per_pair: None,
                efficiency_pct: Some(e.efficiency_pct),
            }
        } else {
            let t = harness::replay_timed(&mut alloc, self.trace);
            eprintln!(
                "  {:<12} {:<24} median {:9.2} ns/pair, p99 {:9.2}",
                kind.name(),
                name,
                t.median_ns_per_pair,
                t.p99_ns_per_pair
            );
            if t.failures > 0 {
                eprintln!(
                    "  WARNING: {name}: {} allocations failed on {}",
                    t.failures,
                    kind.name()
                );
            }
            Row {
                trace: kind.name().into(),
                allocator: name.into(),
                median_ns_per_pair: Some(t.median_ns_per_pair),
                p99_ns_per_pair: Some(t.p99_ns_per_pair),
                net_ns_per_pair: None,
                efficiency_pct: None,
            }
        };
        self.rows.push(row);
    }
}

fn matches(filter: &str, name: &str) -> bool {
    filter
        .split(',')
        .any(|part| !part.is_empty() && name.contains(part))
}

fn run(scale: Scale, filter: Option<&str>) -> Vec<Row> {
    let traces = std::env::var("EMBER_BENCH_TRACE")
        .ok()
        .filter(|t| !t.is_empty());
    let wanted = |name: &str| traces.as_deref().is_none_or(|t| matches(t, name));
    let mut rows = Vec::new();
    for kind in TraceKind::ALL.into_iter().filter(|k| wanted(k.name())) {
        let trace = Trace::generate(TraceConfig::new(kind, scale));
        eprintln!(
            "{}: {} prefill + {} ops, block {} MiB",
            kind.name(),
            trace.prefill.len(),
            trace.ops.len(),
            trace.config.block_size >> 20
        );
        let mut run = Run {
            trace: &trace,
            filter,
            rows: Vec::new(),
        };
        if kind != TraceKind::Efficiency {
            // The harness alone, first, on the same trace: the rows' net figures subtract it.
            run.visit(Baseline::new(trace.config.block_size));
        }
        suite::visit_all(trace.config.block_size, &mut run);
        rows.extend(run.rows);
    }
    if filter.is_some_and(|f| !matches(f, "ember::Arena")) || !wanted("arena") {
        return rows;
    }
    let rounds = if scale == Scale::Quick { 100 } else { 20_000 };
    for (trace, runtime_args) in [("arena_alloc", false), ("arena_alloc_runtime_args", true)] {
        let ns = suite::arena_alloc_ns(rounds, runtime_args);
        eprintln!("{trace}: {ns:.3} ns per allocate");
        rows.push(Row {
            trace: trace.into(),
            allocator: "ember::Arena".into(),
            median_ns_per_pair: Some(ns),
            p99_ns_per_pair: None,
            net_ns_per_pair: None,
            efficiency_pct: None,
        });
    }
    rows
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is ignored.
    let scale = Scale::from_env();
    let filter = std::env::var("EMBER_BENCH_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    // Ember's allocators keep their metadata inline; give construction room to spare.
    let mut rows = std::thread::Builder::new()
        .name("alloc-bench".into())
        .stack_size(256 << 20)
        .spawn(move || run(scale, filter.as_deref()))
        .expect("spawn bench thread")
        .join()
        .expect("bench thread panicked");
    harness::net_of_baseline(&mut rows);
    println!();
    print!("{}", harness::format_table(&rows, &suite::PEERS));
    println!(
        "(p99 is over batches of {} pairs; arena_alloc rows are ns per Arena::allocate: constant / black-boxed size and alignment)",
        ember_tests::traces::PAIRS_PER_BATCH
    );
    let path = harness::json_path();
    match harness::write_json(&rows, &path) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => {
            eprintln!("could not write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}
