//! End to end: real `cargo` builds of the crates under `tests/fixtures/`, each of which packs
//! a module in its build.rs and embeds it with `Embed::build_rs`.
//!
//! - `fits` builds (also as `no_std`), and its own tests run the embedded module: lookups on
//!   `MODULE` without parsing, `MODULE` equal to what `Module::parse` gives (both for the
//!   included and the literal bytes), `KERNELS` as the executables' kernels, a local device
//!   that loads exactly those, and a `Session` that imports the constants in place from the
//!   aligned static and invokes `infer`;
//! - `too_big` and `unknown_kernel` fail to build, with the message on stderr.
//!
//! The fixtures share one target directory under this crate's (dependencies build once) and
//! build `--offline` from a copy of the workspace's lockfile (same versions, already
//! downloaded); if that fails for want of a download, they build online.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `cargo <args…>` in fixture `name`.
fn cargo(name: &str, args: &[&str]) -> Output {
    let dir = fixture(name);
    let workspace_lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&workspace_lock, dir.join("Cargo.lock")).expect("seed the fixture's lockfile");
    let run = |offline: bool| {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
        command
            .args(args)
            .args(offline.then_some("--offline"))
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .env(
                "CARGO_TARGET_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures"),
            )
            .current_dir(&dir);
        command.output().expect("run cargo")
    };
    let output = run(true);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let offline_failed = !output.status.success()
        && (stderr.contains("--offline") || stderr.contains("offline mode"))
        && !stderr.contains("error: module ");
    if offline_failed {
        run(false)
    } else {
        output
    }
}

fn report(output: &Output) -> String {
    format!(
        "status: {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts the build failed with a line `error: module <…>/digits.ember: <message>`.
fn assert_fails_with(output: &Output, message: &str) {
    assert!(!output.status.success(), "{}", report(output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let suffix = format!("digits.ember: {message}");
    let found = stderr.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("error: module ") && line.ends_with(&suffix)
    });
    assert!(found, "no `error: module …{suffix}` in\n{}", report(output));
}

#[test]
fn fits_builds_and_runs_the_embedded_module() {
    let built = cargo("fits", &["build"]);
    assert!(built.status.success(), "{}", report(&built));
    let tested = cargo("fits", &["test", "--lib"]);
    assert!(tested.status.success(), "{}", report(&tested));
    let stdout = String::from_utf8_lossy(&tested.stdout);
    assert!(
        stdout.contains("test result: ok. 5 passed; 0 failed"),
        "{}",
        report(&tested)
    );
}

#[test]
fn too_big_fails_the_build() {
    let output = cargo("too_big", &["build"]);
    assert_fails_with(
        &output,
        "function `infer` needs a 1664-byte arena; the board gives 1024",
    );
}

#[test]
fn unknown_kernel_fails_the_build() {
    let output = cargo("unknown_kernel", &["build"]);
    assert_fails_with(
        &output,
        "executable 2 names kernel `conv2d_f32`, which is not linked; linked: add_f32, \
         copy_u32, fill_u32, matmul_f32, mlp_softmax_f32, mul_f32, noop, relu_f32, softmax_f32",
    );
}
