//! Every reference model imported and run on the local device (inline and on the worker
//! pool), its outputs compared with TensorFlow Lite Micro's on the oracle's cases (zeros,
//! seeded random inputs, person_detect's two images): int8 bit for bit, float within 1e-5
//! relative.
//!
//! The oracle's cases are under `target/oracle/<model>/` (`cargo xtask oracle --all`, which
//! `cargo xtask test` runs first); without them this test says so loudly and checks
//! nothing.

mod common;

use ember_import::{lower_with, parse, LowerOptions};
use ember_npy::compare::matches_tflm;
use ember_npy::Data;
use ember_run::run_local;

#[test]
fn reference_models_match_tflm() {
    let Some(oracles) = common::reference_oracles() else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (dir, manifest) in oracles {
        let bytes = std::fs::read(&manifest.model).expect("the model the oracle ran");
        let graph = parse(&bytes).expect("a reference model parses");
        // The host's lowering, then a GPU's (separable convolutions as one step).
        for (lowering, options) in [
            ("host", LowerOptions::default()),
            ("gpu", LowerOptions::for_gpu()),
        ] {
            let lowered = match lower_with(&graph, "model", options) {
                Ok(lowered) => lowered,
                Err(e) => {
                    failures.push(format!("{} ({lowering}): {e}", dir.display()));
                    continue;
                }
            };
            // The module describes its function's tensors as TFLM sees them.
            let module = hal_core::module::Module::parse(&lowered.built.bytes).expect("module");
            let (_, main) = module.function("main").expect("main");
            for (metas, tensors) in [
                (main.inputs, &manifest.inputs),
                (main.outputs, &manifest.outputs),
            ] {
                assert_eq!(metas.len() as usize, tensors.len(), "{}", dir.display());
                for (meta, t) in metas.iter().zip(tensors.iter()) {
                    let shape: Vec<usize> = meta.shape.iter().map(|d| d as usize).collect();
                    assert_eq!(shape, t.shape, "{}: `{}`", dir.display(), t.name);
                    assert_eq!(meta.element.size() as usize, t.dtype.size());
                    assert_eq!(meta.scale, t.scale.first().copied().unwrap_or(0.0));
                    assert_eq!(
                        i64::from(meta.zero_point),
                        t.zero_point.first().copied().unwrap_or(0)
                    );
                }
            }
            let head = manifest.arena.head.unwrap_or(0);
            let dispatches = main
                .steps
                .iter()
                .filter(|s| matches!(s, hal_core::module::Step::Dispatch { .. }))
                .count();
            eprintln!(
                "{} ({lowering}): {dispatches} dispatches, arena {} B (TFLM's activations: \
                 {head} B), constants {} B",
                dir.file_name().unwrap_or_default().to_string_lossy(),
                lowered.arena_bytes(),
                lowered.constant_bytes
            );
            if lowered.arena_bytes() > head {
                failures.push(format!(
                    "{}: arena {} B is larger than TFLM's {head} B",
                    dir.display(),
                    lowered.arena_bytes()
                ));
            }
            for case in &manifest.cases {
                let inputs = manifest.read_inputs(case).expect("oracle inputs");
                let wants = manifest.read_outputs(case).expect("oracle outputs");
                let bytes: Vec<Vec<u8>> = inputs.iter().map(|a| a.data().to_le_bytes()).collect();
                let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
                for workers in [1, 3] {
                    let out = match run_local(&lowered, &refs, workers, 1) {
                        Ok(out) => out,
                        Err(e) => {
                            failures.push(format!(
                                "{} ({lowering}) {}: {e}",
                                dir.display(),
                                case.name
                            ));
                            continue;
                        }
                    };
                    assert_eq!(
                        out.outputs.len(),
                        wants.len(),
                        "{}: output count",
                        dir.display()
                    );
                    for (n, (got, want)) in out.outputs.iter().zip(&wants).enumerate() {
                        let got = Data::from_le_bytes(want.dtype(), got).expect("output bytes");
                        if let Err(e) = matches_tflm(&got, want.data()) {
                            failures.push(format!(
                                "{} ({lowering}) case {} output {n} ({workers} workers): {e}",
                                dir.display(),
                                case.name
                            ));
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{checked} model runs checked against TFLM");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
