//! The large models through the `ember-run` binary (the program behind
//! `cargo xtask run --model`), every output checked against TFLM's with `--expect`.
//!
//! The models and TFLM's outputs are under `target/oracle-large/<name>/`, written by
//! `cargo xtask oracle --large` (which `cargo xtask test` runs first) from
//! `xtask/oracle/large_models.py`: `deep_int8`, 110 residual blocks (333 transients, 884
//! constants), and `large_int8`, 6.3 MB of fully-connected weights. Each case (the all-zero
//! input and seeded random ones) is one run of the binary, which fails on any differing
//! element. Without the folder the test says SKIPPED, loudly, and checks nothing.
//! `EMBER_ORACLE_LARGE=DIR` reads the models from `DIR` instead.

use ember_npy::oracle::Manifest;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `EMBER_ORACLE_LARGE`, else the workspace's `target/oracle-large`.
fn large_root() -> PathBuf {
    std::env::var_os("EMBER_ORACLE_LARGE").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/oracle-large"),
        PathBuf::from,
    )
}

/// Runs every case of the model in `dir` through the binary; returns the case count.
fn run_cases(dir: &Path) -> usize {
    let manifest =
        Manifest::load(dir).unwrap_or_else(|e| panic!("{}: manifest: {e}", dir.display()));
    assert!(
        !manifest.cases.is_empty(),
        "{}: the manifest lists no case",
        dir.display()
    );
    for case in &manifest.cases {
        assert!(
            !case.outputs.is_empty(),
            "{}: case {} has no output",
            dir.display(),
            case.name
        );
        let mut command = Command::new(env!("CARGO_BIN_EXE_ember-run"));
        command.arg(dir.join("model.tflite"));
        for input in &case.inputs {
            command.arg("--input").arg(dir.join(input));
        }
        for output in &case.outputs {
            command.arg("--expect").arg(dir.join(output));
        }
        let out = command
            .output()
            .unwrap_or_else(|e| panic!("could not start ember-run: {e}"));
        assert!(
            out.status.success(),
            "{} case {}: ember-run exited with {}\n{}{}",
            dir.display(),
            case.name,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    manifest.cases.len()
}

#[test]
fn large_models_equal_tflm_through_ember_run() {
    let root = large_root();
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "SKIPPED: no large models under {} (run `cargo xtask oracle --large`)",
            root.display()
        );
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.join("manifest.json").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "{} holds no model folder", root.display());
    for dir in dirs {
        let cases = run_cases(&dir);
        eprintln!("{}: {cases} cases equal TFLM's", dir.display());
    }
}
