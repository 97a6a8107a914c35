//! Runs every benchmark trace at the quick scale on every allocator, with checks, so the
//! benchmark harness cannot rot.

use ember_tests::adapter::BenchAllocator;
use ember_tests::harness::{self, Row};
use ember_tests::suite::{self, Visitor};
use ember_tests::traces::{Scale, Trace, TraceConfig, TraceKind};

struct Check<'a> {
    trace: &'a Trace,
    seen: Vec<&'static str>,
}

impl Visitor for Check<'_> {
    fn visit<A: BenchAllocator>(&mut self, mut alloc: A) {
        let name = alloc.name();
        let kind = self.trace.config.kind;
        let report = harness::replay_checked(&mut alloc, self.trace)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", name, kind.name()));
        if kind == TraceKind::Efficiency {
            assert_eq!(
                report.failures, 1,
                "{name}: efficiency ends at the first failure"
            );
            let eff = report.efficiency_pct.expect("efficiency figure");
            assert!((1.0..=100.0).contains(&eff), "{name}: efficiency {eff}%");
            // The unchecked replay agrees with the checked one.
            let e = harness::replay_efficiency(&mut alloc, self.trace);
            assert!(
                (e.efficiency_pct - eff).abs() < 1e-9,
                "{name}: {} vs {eff}",
                e.efficiency_pct
            );
        } else {
            assert_eq!(
                report.failures,
                0,
                "{name} on {}: failed allocations",
                kind.name()
            );
            let expected = self.trace.prefill.len() + self.trace.ops.len();
            assert_eq!((report.allocations + report.frees) as usize, expected);
            // The allocator is empty again: the timed replay works on it too.
            let t = harness::replay_timed(&mut alloc, self.trace);
            assert_eq!(t.failures, 0, "{name}");
            assert!(t.median_ns_per_pair > 0.0 && t.p99_ns_per_pair >= t.median_ns_per_pair);
        }
        self.seen.push(name);
    }
}

fn smoke() {
    for kind in TraceKind::ALL {
        let trace = Trace::generate(TraceConfig::new(kind, Scale::Quick));
        let mut check = Check {
            trace: &trace,
            seen: Vec::new(),
        };
        suite::visit_all(trace.config.block_size, &mut check);
        if kind != TraceKind::Efficiency {
            let mut baseline = ember_tests::baseline::Baseline::new(trace.config.block_size);
            let t = harness::replay_timed(&mut baseline, &trace);
            assert_eq!(t.failures, 0, "the baseline never fails");
        }
        for peer in suite::PEERS {
            assert!(check.seen.contains(&peer), "{peer} not run");
        }
        assert_eq!(check.seen.len(), 7);
    }
    assert!(suite::arena_alloc_ns(3, false) > 0.0);
    assert!(suite::arena_alloc_ns(3, true) > 0.0);
}

#[test]
fn every_trace_on_every_allocator() {
    // Ember's allocators keep their metadata inline and are built on the stack first in
    // debug builds: give the thread room.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(smoke)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn report_table_and_json() {
    let timed = |allocator: &str, median: f64| Row {
        trace: "fixed256".into(),
        allocator: allocator.into(),
        median_ns_per_pair: Some(median),
        p99_ns_per_pair: Some(median * 1.5),
        net_ns_per_pair: None,
        efficiency_pct: None,
    };
    let mut rows = vec![
        timed(ember_tests::baseline::NAME, 4.0),
        timed("talc", 20.0),
        timed("ember::Tlsf", 10.0),
        Row {
            trace: "efficiency".into(),
            allocator: "talc".into(),
            median_ns_per_pair: None,
            p99_ns_per_pair: None,
            net_ns_per_pair: None,
            efficiency_pct: Some(90.0),
        },
    ];
    harness::net_of_baseline(&mut rows);
    assert_eq!(rows[1].net_ns_per_pair, Some(16.0));
    assert_eq!(rows[3].net_ns_per_pair, None);
    let raw = harness::ratios_vs_best_peer(&rows, &suite::PEERS, false);
    assert_eq!(raw, vec![None, Some(1.0), Some(0.5), Some(1.0)]);
    let net = harness::ratios_vs_best_peer(&rows, &suite::PEERS, true);
    assert_eq!(net, vec![None, Some(1.0), Some(0.375), None]);
    assert!(harness::format_table(&rows, &suite::PEERS).contains("ember::Tlsf"));
    let dir = std::env::temp_dir().join(format!("ember-bench-smoke-{}", std::process::id()));
    let path = dir.join("alloc.json");
    harness::write_json(&rows, &path).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v[1]["median_ns_per_pair"], 20.0);
    assert_eq!(v[1]["net_ns_per_pair"], 16.0);
    assert!(v[3]["median_ns_per_pair"].is_null());
    assert_eq!(v[3]["efficiency_pct"], 90.0);
    std::fs::remove_dir_all(dir).unwrap();
}
