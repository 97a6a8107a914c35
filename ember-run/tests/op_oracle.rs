//! Every op Ember supports, on randomized single-op models, against TensorFlow Lite
//! Micro: int8, int16 and int32 outputs equal, float outputs within 1e-5 relative (or 1e-6
//! absolute near zero). The ops TFLM does not have (RELU_N1_TO_1, RELU_0_TO_1, GELU) are
//! held to TensorFlow Lite's own reference kernels instead (LiteRT's interpreter, its
//! `BUILTIN_REF` resolver; each manifest's `oracle.interpreter` says which ran), under the
//! same rules; "TFLM" below stands for whichever it was.
//!
//! The models and TFLM's outputs are under `target/oracle-ops/<variant>/<n>/`, written by
//! `cargo xtask oracle --ops` (which `cargo xtask test` runs first) from
//! `xtask/oracle/single_op_models.py`: shapes, strides, padding, dilation, fused
//! activations, broadcasting and quantization drawn at random, each model with its all-zero
//! case and two seeded random ones. Every model runs inline; every tenth also on the local
//! driver's worker pool (3 workers). An op the lowering refuses as unsupported is counted,
//! not failed, and its error must name the op; anything else that goes wrong (a parse or
//! lowering error, a run error, a differing element) fails the test, each listed with the
//! model's parameters and its first differing elements. Without the folder the test says
//! SKIPPED, loudly, and checks nothing. `EMBER_ORACLE_OPS=DIR` reads the models from `DIR`
//! instead (a generator run with `-o DIR`, `--only` some variants).

use ember_import::{lower, parse, LowerError};
use ember_npy::compare::Differences;
use ember_npy::oracle::Manifest;
use ember_npy::Data;
use ember_run::run_local_cases;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `EMBER_ORACLE_OPS`, else the workspace's `target/oracle-ops`.
fn ops_root() -> PathBuf {
    std::env::var_os("EMBER_ORACLE_OPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle-ops"),
        PathBuf::from,
    )
}

/// Every model with a tenth of this index runs on the worker pool as well.
const POOL_EVERY: usize = 10;
/// Differing elements listed per output.
const SHOWN: usize = 6;

/// What one model gave.
#[derive(Default)]
struct Outcome {
    runs: usize,
    refusal: Option<String>,
    failures: Vec<String>,
}

/// The manifest's `params` and `op`, as written by the generator.
fn describe(dir: &Path) -> (String, String) {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    (
        json["op"].as_str().unwrap_or("?").to_string(),
        json["params"].to_string(),
    )
}

fn check_model(dir: &Path, pool: bool) -> Outcome {
    let mut outcome = Outcome::default();
    let (op, params) = describe(dir);
    let here = format!("{op} {} ({params})", dir.display());
    let manifest = match Manifest::load(dir.join("manifest.json")) {
        Ok(m) => m,
        Err(e) => {
            outcome.failures.push(format!("{here}: manifest: {e}"));
            return outcome;
        }
    };
    let bytes = match std::fs::read(&manifest.model) {
        Ok(b) => b,
        Err(e) => {
            outcome.failures.push(format!("{here}: the model: {e}"));
            return outcome;
        }
    };
    let graph = match parse(&bytes) {
        Ok(g) => g,
        Err(e) => {
            outcome
                .failures
                .push(format!("{here}: does not parse: {e}"));
            return outcome;
        }
    };
    let lowered = match lower(&graph, "model") {
        Ok(l) => l,
        Err(e @ LowerError::Unsupported { .. }) => {
            let message = e.to_string();
            if !message.contains(op.as_str()) {
                outcome
                    .failures
                    .push(format!("{here}: refused without naming {op}: {message}"));
            }
            outcome.refusal = Some(format!("{here}: {message}"));
            return outcome;
        }
        Err(e) => {
            outcome
                .failures
                .push(format!("{here}: does not lower: {e}"));
            return outcome;
        }
    };
    let mut inputs = Vec::new();
    let mut wants = Vec::new();
    for case in &manifest.cases {
        match (manifest.read_inputs(case), manifest.read_outputs(case)) {
            (Ok(i), Ok(o)) => {
                inputs.push(i.iter().map(|a| a.data().to_le_bytes()).collect::<Vec<_>>());
                wants.push(o);
            }
            (Err(e), _) | (_, Err(e)) => {
                outcome.failures.push(format!("{here} {}: {e}", case.name));
                return outcome;
            }
        }
    }
    let cases: Vec<Vec<&[u8]>> = inputs
        .iter()
        .map(|set| set.iter().map(Vec::as_slice).collect())
        .collect();
    let case_refs: Vec<&[&[u8]]> = cases.iter().map(Vec::as_slice).collect();
    let worker_counts: &[usize] = if pool { &[1, 3] } else { &[1] };
    for &workers in worker_counts {
        let got = match run_local_cases(&lowered, &case_refs, workers) {
            Ok(g) => g,
            Err(e) => {
                outcome
                    .failures
                    .push(format!("{here} ({workers} workers): run: {e}"));
                continue;
            }
        };
        for ((case, got), want) in manifest.cases.iter().zip(&got).zip(&wants) {
            outcome.runs += 1;
            if got.len() != want.len() {
                outcome.failures.push(format!(
                    "{here} case {}: {} outputs, TFLM has {}",
                    case.name,
                    got.len(),
                    want.len()
                ));
                continue;
            }
            for (k, (g, w)) in got.iter().zip(want).enumerate() {
                let Some(g) = Data::from_le_bytes(w.dtype(), g) else {
                    outcome.failures.push(format!(
                        "{here} case {} output {k}: {} bytes are no {:?} tensor",
                        case.name,
                        g.len(),
                        w.dtype()
                    ));
                    continue;
                };
                let differences = Differences::of(&g, w.data(), SHOWN);
                if !differences.is_empty() {
                    outcome.failures.push(format!(
                        "{here} case {} output {k} ({workers} workers): {} of {} differ: {}",
                        case.name,
                        differences.count,
                        w.len(),
                        differences.describe()
                    ));
                }
            }
        }
    }
    outcome
}

/// Per variant: models, runs compared, Ember's refusals, failed models.
#[derive(Default)]
struct Row {
    op: String,
    models: usize,
    runs: usize,
    refused: usize,
    failed: usize,
    tflm_refused: usize,
}

#[test]
fn single_op_models_match_tflm() {
    let root = ops_root();
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "\n*** SKIPPED: no per-op oracle models at {} — run `cargo xtask oracle --ops` ***\n",
            root.display()
        );
        return;
    };
    let start = Instant::now();
    let summary: serde_json::Value = std::fs::read_to_string(root.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut variants: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_dir())
        .collect();
    variants.sort();
    let mut models: Vec<(String, usize, PathBuf)> = Vec::new();
    for variant in &variants {
        let name = variant
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Ok(dirs) = std::fs::read_dir(variant) else {
            continue;
        };
        let mut numbered: Vec<(usize, PathBuf)> = dirs
            .filter_map(|e| {
                let path = e.ok()?.path();
                let n = path.file_name()?.to_str()?.parse().ok()?;
                Some((n, path))
            })
            .collect();
        numbered.sort();
        models.extend(numbered.into_iter().map(|(n, p)| (name.clone(), n, p)));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let outcomes: Vec<(String, usize, Outcome)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let models = &models;
                scope.spawn(move || {
                    models
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|(v, n, dir)| (v.clone(), *n, check_model(dir, n % POOL_EVERY == 0)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a checking thread panicked"))
            .collect()
    });
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut refusals = Vec::new();
    for (variant, _, outcome) in outcomes {
        let row = rows.entry(variant.clone()).or_default();
        let info = &summary["variants"][variant.as_str()];
        row.op = info["op"].as_str().unwrap_or("?").to_string();
        row.tflm_refused = info["refused"].as_array().map_or(0, Vec::len);
        row.models += 1;
        row.runs += outcome.runs;
        row.refused += usize::from(outcome.refusal.is_some());
        row.failed += usize::from(!outcome.failures.is_empty());
        refusals.extend(outcome.refusal);
        failures.extend(outcome.failures);
    }
    eprintln!(
        "\n{:<34} {:<18} {:>6} {:>6} {:>13} {:>14} {:>7}",
        "variant", "op", "models", "runs", "TFLM refused", "Ember refused", "failed"
    );
    let mut total = Row::default();
    for (variant, row) in &rows {
        eprintln!(
            "{variant:<34} {:<18} {:>6} {:>6} {:>13} {:>14} {:>7}",
            row.op, row.models, row.runs, row.tflm_refused, row.refused, row.failed
        );
        total.models += row.models;
        total.runs += row.runs;
        total.tflm_refused += row.tflm_refused;
        total.refused += row.refused;
        total.failed += row.failed;
    }
    eprintln!(
        "{:<34} {:<18} {:>6} {:>6} {:>13} {:>14} {:>7}",
        "total", "", total.models, total.runs, total.tflm_refused, total.refused, total.failed
    );
    eprintln!(
        "{} models from {} checked against TFLM in {:.1} s ({threads} threads)",
        total.models,
        root.display(),
        start.elapsed().as_secs_f64()
    );
    if !refusals.is_empty() {
        eprintln!("\nEmber refuses {} of them as unsupported:", refusals.len());
        for r in refusals.iter().take(20) {
            eprintln!("  {r}");
        }
    }
    assert!(total.models > 0, "no models under {}", root.display());
    assert!(
        failures.is_empty(),
        "{} failures in {} of {} models:\n{}",
        failures.len(),
        total.failed,
        total.models,
        failures.join("\n")
    );
}
