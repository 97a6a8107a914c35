//! Every op on randomized single-op models, imported and run on the Vulkan driver, against
//! TensorFlow Lite Micro: int8 and other integer outputs equal, float outputs within 1e-5
//! relative (or 1e-6 absolute near zero), as ember-run's `op_oracle` holds the local
//! driver. The ops TFLM does not have (RELU_N1_TO_1, RELU_0_TO_1, GELU) are held to
//! TensorFlow Lite's own reference kernels instead (LiteRT's interpreter, its `BUILTIN_REF`
//! resolver); "TFLM" below and in the messages stands for whichever oracle it was.
//!
//! The models and TFLM's outputs are under `target/oracle-ops/<variant>/<n>/` (`cargo
//! xtask oracle --ops`, which `cargo xtask test` runs first; `EMBER_ORACLE_OPS=DIR` reads
//! them from `DIR` instead); without them this test says so loudly and checks nothing. It
//! runs every model (`EMBER_OP_ORACLE_EVERY=N`, every `N`th of each variant). A model the
//! importer refuses is counted (ember-run's own test holds the refusal to naming the op);
//! anything else that goes wrong (a kernel with no SPIR-V, a lowering or load error, a run
//! error, a differing element, a validation message) fails the test.

mod common;

use ember_import::{lower, parse, LowerError};
use ember_npy::compare::matches_tflm;
use ember_npy::oracle::Manifest;
use ember_npy::Data;
use ember_run::DeviceModel;
use hal_core::memory::BufferParams;
use hal_core::module::Module;
use hal_core::session::ResultMemory;
use hal_core::{Device, ExecutableSource};
use hal_vulkan::VulkanDevice;
use std::path::{Path, PathBuf};

/// `EMBER_ORACLE_OPS`, else the workspace's `target/oracle-ops`.
fn ops_root() -> PathBuf {
    std::env::var_os("EMBER_ORACLE_OPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle-ops"),
        PathBuf::from,
    )
}

/// The generator's `op` and `params` for a model's folder.
fn describe(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    format!(
        "{} {} ({})",
        json["op"].as_str().unwrap_or("?"),
        dir.display(),
        json["params"]
    )
}

/// What one model gave on the GPU.
enum Outcome {
    /// Its cases ran and matched TFLM.
    Matched(usize),
    /// The importer refuses it (ember-run's own test holds the refusal to naming the
    /// op).
    Refused,
    /// Something went wrong.
    Failed(String),
}

fn check_model(device: &mut VulkanDevice<'static>, dir: &Path) -> Outcome {
    let here = describe(dir);
    let manifest = match Manifest::load(dir.join("manifest.json")) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("{here}: manifest: {e}")),
    };
    let bytes = match std::fs::read(&manifest.model) {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(format!("{here}: the model: {e}")),
    };
    let graph = match parse(&bytes) {
        Ok(g) => g,
        Err(e) => return Outcome::Failed(format!("{here}: does not parse: {e}")),
    };
    let lowered = match lower(&graph, "model") {
        Ok(l) => l,
        Err(LowerError::Unsupported { .. }) => return Outcome::Refused,
        Err(e) => return Outcome::Failed(format!("{here}: does not lower: {e}")),
    };
    let module = match Module::parse(&lowered.built.bytes) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("{here}: module: {e}")),
    };
    let mut missing = None;
    let linked = |k: &str| {
        let known = ember_kernels_wgsl::find(k).is_some();
        if !known {
            missing = Some(k.to_string());
        }
        known
    };
    if module.check_kernels(linked).is_err() {
        let kernel = missing.unwrap_or_default();
        return Outcome::Failed(format!("{here}: no SPIR-V for `{kernel}`"));
    }
    let mut model = match DeviceModel::new(
        device,
        &lowered,
        BufferParams::host_visible(),
        ResultMemory::DeviceLocal,
    ) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("{here}: load: {e}")),
    };
    let mut result = Outcome::Matched(0);
    for case in &manifest.cases {
        let (inputs, wants) = match (manifest.read_inputs(case), manifest.read_outputs(case)) {
            (Ok(i), Ok(o)) => (i, o),
            (Err(e), _) | (_, Err(e)) => {
                result = Outcome::Failed(format!("{here} {}: {e}", case.name));
                break;
            }
        };
        let bytes: Vec<Vec<u8>> = inputs.iter().map(|a| a.data().to_le_bytes()).collect();
        let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
        let run = model
            .write_inputs(device, &refs)
            .and_then(|()| model.invoke(device))
            .and_then(|()| model.read_outputs(device));
        if let Err(e) = run {
            result = Outcome::Failed(format!("{here} case {}: run: {e}", case.name));
            break;
        }
        let difference =
            model
                .outputs()
                .iter()
                .zip(&wants)
                .enumerate()
                .find_map(|(k, (got, want))| {
                    let Some(got) = Data::from_le_bytes(want.dtype(), got) else {
                        return Some(format!(
                            "output {k}: {} bytes are no {:?} tensor",
                            got.len(),
                            want.dtype()
                        ));
                    };
                    matches_tflm(&got, want.data())
                        .err()
                        .map(|d| format!("output {k}: {d}"))
                });
        if model.outputs().len() != wants.len() {
            result = Outcome::Failed(format!("{here} case {}: output count", case.name));
            break;
        }
        if let Some(d) = difference {
            result = Outcome::Failed(format!("{here} case {}: {d}", case.name));
            break;
        }
        if let Outcome::Matched(n) = &mut result {
            *n += 1;
        }
    }
    if let Err(e) = model.release(device) {
        return Outcome::Failed(format!("{here}: release: {e}"));
    }
    result
}

#[test]
fn single_op_models_match_tflm_on_vulkan() {
    let _alone = common::alone();
    let root = ops_root();
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "\n*** SKIPPED: no single-op models at {} — run `cargo xtask oracle --ops` ***\n",
            root.display()
        );
        return;
    };
    let every: usize = std::env::var("EMBER_OP_ORACLE_EVERY")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    let mut variants: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_dir())
        .collect();
    variants.sort();
    let mut device = common::device();
    // Every kernel loaded once for the whole run: each model's load then shares the
    // kernel's pipeline instead of compiling it anew (most of the run on lavapipe).
    let kept: Vec<_> = ember_kernels_wgsl::KERNELS
        .iter()
        .map(|kernel| {
            device
                .load_executable(ExecutableSource::Kernel(kernel.name))
                .expect("every kernel loads")
        })
        .collect();
    let mut failures = Vec::new();
    let (mut runs, mut ran_models) = (0, 0);
    for variant in &variants {
        let mut models: Vec<(usize, PathBuf)> = std::fs::read_dir(variant)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let path = e.ok()?.path();
                let n = path.file_name()?.to_str()?.parse().ok()?;
                Some((n, path))
            })
            .collect();
        models.sort();
        let (mut matched, mut cases, mut refused) = (0, 0, 0);
        for (_, dir) in models.iter().filter(|(n, _)| n % every == 0) {
            match check_model(&mut device, dir) {
                Outcome::Matched(n) => {
                    matched += 1;
                    cases += n;
                }
                Outcome::Refused => refused += 1,
                Outcome::Failed(f) => failures.push(f),
            }
        }
        runs += cases;
        ran_models += matched;
        eprintln!(
            "{}: {matched} models ({cases} cases) match TFLM, {refused} refused by the importer",
            variant.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    for executable in kept {
        device.release_executable(executable).expect("release");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(runs > 0, "no single-op model ran under {}", root.display());
    assert_eq!(device.object_counts(), Default::default(), "nothing left");
    assert_eq!(device.validation_messages(), 0, "validation messages");
    eprintln!("{ran_models} single-op models ({runs} cases) on Vulkan matched TFLM");
}
