//! Every reference model imported and run on the Vulkan driver, its outputs compared with
//! TensorFlow Lite Micro's on the oracle's cases (zeros, seeded random inputs,
//! person_detect's two images): int8 bit for bit, float within 1e-5 relative, as the local
//! driver's model test holds them.
//!
//! The oracle's cases are under `target/oracle/<model>/` (`cargo xtask oracle --all`, which
//! `cargo xtask test` runs first), and the large models' under `target/oracle-large/`
//! (`cargo xtask oracle --large`); without the first this test says so loudly and checks
//! nothing. The validation layer is on unless `EMBER_VULKAN_VALIDATION=0`.

mod common;

use ember_import::{lower_with, parse, LowerOptions};
use ember_npy::compare::matches_tflm;
use ember_npy::oracle::Manifest;
use ember_npy::Data;
use ember_run::DeviceModel;
use hal_core::memory::BufferParams;
use hal_core::module::{Module, Step};
use hal_core::session::ResultMemory;
use hal_core::Device;
use std::path::{Path, PathBuf};

fn oracle_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle")
}

fn large_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle-large")
}

#[test]
fn reference_models_match_tflm_on_vulkan() {
    let root = oracle_root();
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "\n*** SKIPPED: no oracle cases at {} — run `cargo xtask oracle --all` ***\n",
            root.display()
        );
        return;
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    // The large models too (`cargo xtask oracle --large`: 884 constants, 6.3 MB of them),
    // where they were made.
    if let Ok(large) = std::fs::read_dir(large_root()) {
        dirs.extend(large.filter_map(|e| Some(e.ok()?.path())));
    }
    dirs.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut device = common::device();
    for dir in dirs {
        let Ok(manifest) = Manifest::load(dir.join("manifest.json")) else {
            continue;
        };
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&manifest.model).expect("the model the oracle ran");
        let graph = parse(&bytes).expect("a reference model parses");
        // The host's layout (HWIO int8 convolution filters), then the Cortex-M one (OHWI),
        // whose GPU kernel paths differ, then a GPU's (separable convolutions in one step).
        let ohwi = LowerOptions {
            int8_conv_ohwi: true,
            ..LowerOptions::default()
        };
        for (layout, options) in [
            ("HWIO", LowerOptions::default()),
            ("OHWI", ohwi),
            ("GPU", LowerOptions::for_gpu()),
        ] {
            let lowered = lower_with(&graph, "model", options).expect("a reference model lowers");
            // A GPU overlaps dispatches that no barrier separates (lavapipe does not, and its
            // synchronization validation does not flag it): every step follows a barrier.
            let module = Module::parse(&lowered.built.bytes).expect("module");
            let (_, main) = module.function("main").expect("main");
            let mut previous_was_step = false;
            for step in main.steps.iter() {
                let is_step = !matches!(step, Step::Barrier);
                assert!(
                    !(is_step && previous_was_step),
                    "{name}: two steps without a barrier between them"
                );
                previous_was_step = is_step;
            }
            let mut model = match DeviceModel::new(
                &mut device,
                &lowered,
                BufferParams::host_visible(),
                ResultMemory::DeviceLocal,
            ) {
                Ok(model) => model,
                Err(e) => {
                    failures.push(format!("{name} ({layout}): {e}"));
                    continue;
                }
            };
            let mut model_failures = 0;
            for case in &manifest.cases {
                let inputs = manifest.read_inputs(case).expect("oracle inputs");
                let wants = manifest.read_outputs(case).expect("oracle outputs");
                let bytes: Vec<Vec<u8>> = inputs.iter().map(|a| a.data().to_le_bytes()).collect();
                let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
                let run = model
                    .write_inputs(&mut device, &refs)
                    .and_then(|()| model.invoke(&mut device))
                    .and_then(|()| model.read_outputs(&mut device));
                if let Err(e) = run {
                    failures.push(format!("{name} ({layout}) case {}: {e}", case.name));
                    model_failures += 1;
                    continue;
                }
                if model.outputs().len() != wants.len() {
                    failures.push(format!(
                        "{name} ({layout}) case {}: output count",
                        case.name
                    ));
                }
                for (n, (got, want)) in model.outputs().iter().zip(&wants).enumerate() {
                    let got = Data::from_le_bytes(want.dtype(), got).expect("output bytes");
                    if let Err(e) = matches_tflm(&got, want.data()) {
                        failures.push(format!(
                            "{name} ({layout}) case {} output {n}: {e}",
                            case.name
                        ));
                        model_failures += 1;
                    }
                }
                checked += 1;
            }
            eprintln!(
                "{name} ({layout} filters): {} cases, {}",
                manifest.cases.len(),
                if model_failures == 0 {
                    "all match TFLM"
                } else {
                    "MISMATCH"
                }
            );
            model.release(&mut device).expect("release");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 0, "no oracle case found under {}", root.display());
    assert_eq!(device.object_counts(), Default::default(), "nothing left");
    // Synchronization validation reports a dispatch that reads what an earlier one wrote
    // without a barrier between them (lavapipe runs them in order, a GPU need not).
    assert_eq!(device.validation_messages(), 0, "validation messages");
    eprintln!("{checked} model runs on Vulkan checked against TFLM");
}
