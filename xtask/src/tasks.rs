//! The commands themselves.

use crate::background::Background;
use crate::boards;
use crate::miri;
use crate::setup::{self, NO_STD_TARGET};
use crate::step::{cmd, root, run, target_dir, Result};
use std::time::Instant;

/// Crates that are `#![no_std]` and must build for the Cortex-M target, with the feature
/// sets firmware uses.
const NO_STD_CRATES: &[(&str, &[&str])] = &[
    ("hal-core", &["", "defmt"]),
    ("hal-local", &["", "defmt", "tflite", "cores,tflite"]),
    ("ember-kernels", &["", "tuned-check"]),
];

/// `cargo xtask test`: everything CI checks, in order, stopping at the first failure. Among
/// them: the HAL bench check (each figure within its bound against its same-run baseline,
/// right after the tests) and, with the boards, the footprint table and its bounds.
pub fn test(with_miri: bool) -> Result {
    let started = Instant::now();
    setup::stable()?;
    // hal-vulkan's conformance suite and the WGSL kernels' tests run on lavapipe.
    setup::vulkan()?;
    run(
        "formatting",
        cmd("cargo", &["fmt", "--all", "--", "--check"]),
    )?;
    // Miri interprets on one core: its sets run in the background on two lanes, beside every
    // other step, on the cores their single-threaded stretches (test runs, linking, QEMU)
    // leave idle, and pause for the timed HAL check.
    let mut background = Background::new();
    if with_miri {
        setup::miri()?;
        for lane in miri::lanes() {
            background.add(lane);
        }
    }
    let rest = test_beside(&background);
    background.finish(rest)?;
    if !with_miri {
        println!("\n==> Miri NOT run (--no-miri was given); CI always runs it");
    }
    println!(
        "\nxtask test: all passed in {:.0} s",
        started.elapsed().as_secs_f32()
    );
    Ok(())
}

/// The steps of [`test`] beside Miri's lanes (paused for the HAL check's timed runs).
fn test_beside(background: &Background) -> Result {
    // The model tests and the boards compare with TFLM's outputs on these cases.
    crate::oracle::all(3)?;
    // The boards first, while Miri's lanes keep the other core busy: their firmware builds
    // (fat LTO) and QEMU runs mostly use one core, where clippy and the workspace's tests
    // after them use both. (As a third lane of their own, beside the steps below, they made
    // the run slower: the machine is busy throughout, and more processes at once cost more.)
    test_boards()?;
    run(
        "clippy, warnings denied",
        cmd(
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
        ),
    )?;
    // The per-op tests compare with TFLM's outputs on these random single-op models.
    crate::oracle::ops(100, 0)?;
    // A model of more than 200 transients and one of more than 5 MB of constants, through
    // TFLM: `ember-run/tests/large_models.rs` runs them through `ember-run` (the program
    // behind `cargo xtask run --model`) in the workspace's tests, every output checked.
    crate::oracle::large()?;
    run(
        "tests of every crate, every feature (local driver on its worker pool too)",
        cmd("cargo", &["test", "--workspace", "--all-features"]),
    )?;
    hal_check(background)?;
    run(
        "the Vulkan bench at smoke sizes on lavapipe (validation on)",
        bench_vulkan_command(&["--smoke"], true),
    )?;
    run(
        "the conformance suite with default features (inline local driver only)",
        cmd(
            "cargo",
            &["test", "-p", "ember-tests", "--test", "conformance_local"],
        ),
    )?;
    for (krate, feature_sets) in NO_STD_CRATES {
        for features in *feature_sets {
            let mut args = vec!["build", "-p", krate, "--target", NO_STD_TARGET];
            if !features.is_empty() {
                args.extend(["--features", features]);
            }
            let with = if features.is_empty() {
                "no features".to_string()
            } else {
                format!("--features {features}")
            };
            run(
                &format!("{krate} builds no_std for {NO_STD_TARGET} ({with})"),
                cmd("cargo", &args),
            )?;
        }
    }
    Ok(())
}

/// `cargo xtask run --board B [--device D]`: on the host board (the default), the main job
/// (train, pack, run every held-out image through the runtime), then the host board's
/// firmware; on a QEMU board, its firmware under QEMU. `--device vulkan` runs the main job on
/// the Vulkan driver (validation layer on) and checks it against the local driver.
pub fn run_board(name: &str, device: &str) -> Result {
    let board = boards::find(name)?;
    match (device, board.qemu.is_none()) {
        ("local", _) => {}
        ("vulkan", true) => {
            setup::stable()?;
            setup::vulkan()?;
            let mut job = cmd(
                "cargo",
                &[
                    "run",
                    "--release",
                    "-p",
                    "ember-digits",
                    "--features",
                    "vulkan",
                    "--",
                    "--device",
                    "vulkan",
                ],
            );
            job.env("EMBER_VULKAN_VALIDATION", "1");
            return run(
                "digits on the Vulkan driver (validation on), checked against the local driver",
                job,
            );
        }
        ("vulkan", false) => {
            return Err(format!(
                "--device vulkan runs on the host board, not {name}"
            ))
        }
        (other, _) => return Err(format!("--device local|vulkan, not {other}")),
    }
    if board.qemu.is_none() {
        setup::stable()?;
        run(
            "digits: train, pack, run every held-out image through the runtime (host board)",
            cmd("cargo", &["run", "--release", "-p", "ember-digits"]),
        )?;
    }
    boards::run_board(board)
}

/// The boards workspace: formatting, clippy per board on its own target, every board's
/// firmware run (under QEMU for the QEMU boards), every board's reference models checked
/// against TFLM, and the check that the harness fails runs that panic, fail, fault or hang.
fn test_boards() -> Result {
    run(
        "boards: formatting",
        boards::cargo(&["fmt", "--all", "--", "--check"]),
    )?;
    let models = crate::board_models::models_present();
    let sine = if models {
        Some(crate::oracle::cases_for(&crate::board_models::model_file(
            "sine",
        )?)?)
    } else {
        None
    };
    for board in boards::BOARDS {
        board.set_up()?;
        let triple = board.triple()?;
        let args = vec![
            "clippy",
            "--release",
            "-p",
            board.name,
            "--target",
            &triple,
            "--",
            "-D",
            "warnings",
        ];
        run(
            &format!("boards: clippy for {}, warnings denied", board.name),
            boards::cargo(&args),
        )?;
        if board.name == crate::cores::BOARD {
            // Two cores, the model runner too where the models are present.
            let features = if sine.is_some() {
                "cores,model"
            } else {
                "cores"
            };
            let mut with_cores = args.clone();
            with_cores.splice(4..4, ["--features", features]);
            let mut clippy = boards::cargo(&with_cores);
            if let Some(sine) = &sine {
                clippy.env("EMBER_MODEL_ORACLE", sine);
            }
            run(
                &format!(
                    "boards: clippy for {} on two cores, warnings denied",
                    board.name
                ),
                clippy,
            )?;
        }
        if let (Some(_), Some(sine)) = (board.qemu, &sine) {
            // The model runner too, over one small model's embedded cases.
            let mut with_model = args.clone();
            with_model.splice(4..4, ["--features", "model"]);
            let mut clippy = boards::cargo(&with_model);
            clippy.env("EMBER_MODEL_ORACLE", sine);
            run(
                &format!(
                    "boards: clippy for {}'s model runner, warnings denied",
                    board.name
                ),
                clippy,
            )?;
        }
    }
    // Release, for the host's triple: the build scripts' dependencies built for the clippy
    // runs above serve this build too.
    let host = boards::host_triple()?;
    run(
        "boards: the firmware crate's and its heap's own tests (host)",
        boards::cargo(&[
            "test",
            "--release",
            "-p",
            "ember-firmware",
            "-p",
            "ember-heap",
            "--features",
            "ember-firmware/std,ember-firmware/heap",
            "--target",
            &host,
        ]),
    )?;
    for board in boards::BOARDS {
        boards::run_board(*board)?;
    }
    // Every board's reference models, each output checked against TFLM's on the device, and
    // the tuned kernels against the portable ones.
    if models {
        crate::board_models::run_all(None)?;
        // The HAL path too: a model firmware that runs a `Session` over the local device.
        crate::board_models::run_model_path(
            boards::find("mps2-an386")?,
            "kws_ref_model",
            crate::board_models::ModelPath::Session,
        )?;
        // A model firmware in an arena its plain program does not fit: patch-based stages,
        // and a build error naming the bytes where nothing fits.
        crate::board_models::arena_limits()?;
    }
    // The multi-core board: the firmware on two cores, and models bit-exact on one core and
    // on two (`cargo xtask bench cores` times them all).
    crate::cores::test(&["person_detect", "kws_ref_model", "magic_wand"])?;
    crate::board_models::kernel_check()?;
    boards::check_failures_are_caught()?;
    // The footprint table, and its check that static devices stay in `.bss`.
    crate::size::size()
}

/// `cargo xtask bench <name>`: runs `tests/benches/<name>.rs` in release mode and checks
/// it wrote `target/bench/<name>.json`.
pub fn bench(name: &str, what: &str) -> Result {
    setup::stable()?;
    run(
        &format!("{what} (release)"),
        cmd("cargo", &["bench", "-p", "ember-tests", "--bench", name]),
    )?;
    let json = target_dir().join(format!("bench/{name}.json"));
    if !json.is_file() {
        return Err(format!("the benchmark did not write {}", json.display()));
    }
    println!("\nwrote {}", json.display());
    Ok(())
}

/// `cargo xtask bench models`: every reference model on the local device against TFLM's
/// interpreter and IREE's CPU runtime in the same run (`ember-run/benches/models.rs`,
/// which runs `xtask/oracle/tflm_bench.py` in the oracle's venv and
/// `xtask/oracle/iree_bench.py` in IREE's, on the `.vmfb`s `crate::iree` compiled) →
/// `target/bench/models.json`. Says SKIPPED, loudly, when the models are absent; says IREE
/// NOT MEASURED, loudly, where IREE cannot be installed or a model does not compile.
pub fn bench_models() -> Result {
    let dir = crate::oracle::models_dir();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut models = Vec::new();
    if dir.is_dir() {
        crate::oracle::find_models(&dir, &mut models)?;
    }
    if models.is_empty() {
        crate::oracle::skipped(&format!(
            "the models benchmark: no .tflite under {} (set EMBER_MODELS to their folder)",
            dir.display()
        ));
        return Ok(());
    }
    models.sort();
    setup::stable()?;
    let python = crate::oracle::venv()?;
    let mut c = cmd("cargo", &["bench", "-p", "ember-run", "--bench", "models"]);
    c.env("EMBER_TFLM_PYTHON", &python)
        .env("EMBER_MODELS", &dir);
    // IREE is measured where it can be; where it cannot, the bench says so per model and
    // times Ember and TFLM all the same.
    let iree = crate::iree::venv().and_then(|python| {
        let modules = crate::iree::compile_all(&python, &models)?;
        Ok((python, modules))
    });
    match iree {
        Ok((python, modules)) => {
            c.env("EMBER_IREE_PYTHON", python)
                .env("EMBER_IREE_MODULES", modules);
        }
        Err(e) => {
            crate::iree::loudly(&format!("IREE NOT MEASURED: {e}"));
            c.env("EMBER_IREE_ERROR", e);
        }
    }
    run(
        "models benchmark: Ember on the local device against TFLM and IREE (release)",
        c,
    )?;
    let json = target_dir().join("bench/models.json");
    if !json.is_file() {
        return Err(format!("the benchmark did not write {}", json.display()));
    }
    println!("\nwrote {}", json.display());
    Ok(())
}

/// How many processes `bench hal --check` may run. A figure fails only when it is past its
/// bound in every one: a slower driver is slower in each process, while a busy shared
/// machine now and then slows one whole process (its rounds with it).
const HAL_CHECK_RUNS: usize = 3;

/// `cargo xtask bench hal --check`: the HAL benchmark's guard. Each figure's ratio to its
/// same-run baseline must stay within the bound written beside it (`BOUNDS` in
/// `tests/benches/hal.rs`); about a second per run once built.
pub fn bench_hal_check() -> Result {
    setup::stable()?;
    hal_check(&Background::new())
}

/// The HAL bench check: the benchmark built, then its timed runs with `background`'s lanes
/// paused (a busy core would skew them).
fn hal_check(background: &Background) -> Result {
    run(
        "HAL bench check: build the benchmark (release)",
        cmd(
            "cargo",
            &["bench", "-p", "ember-tests", "--bench", "hal", "--no-run"],
        ),
    )?;
    background.paused(hal_check_runs)
}

/// The HAL bench check's timed runs, once built: up to [`HAL_CHECK_RUNS`], until every
/// figure that passed its bound has come back within it.
fn hal_check_runs() -> Result {
    let json = target_dir().join("bench/hal.json");
    let started = Instant::now();
    // Figures past their bound in every run so far, each with its latest message.
    let mut failing: Option<Vec<(String, String)>> = None;
    for attempt in 1..=HAL_CHECK_RUNS {
        let _ = std::fs::remove_file(&json);
        let status = run(
            &format!(
                "HAL bench check, run {attempt} of at most {HAL_CHECK_RUNS}: every figure \
                 against its same-run baseline, bounds in tests/benches/hal.rs (BOUNDS)"
            ),
            cmd(
                "cargo",
                &[
                    "bench",
                    "-p",
                    "ember-tests",
                    "--bench",
                    "hal",
                    "--",
                    "--check",
                ],
            ),
        );
        let now = match (status, hal_failures(&json)) {
            (Ok(()), Ok(now)) => now,
            (Err(_), Ok(now)) if !now.is_empty() => now,
            (Err(e), Ok(_)) => {
                return Err(format!(
                    "{e}, and {} names no figure past its bound",
                    json.display()
                ))
            }
            (Err(e), Err(json_error)) => return Err(format!("{e} ({json_error})")),
            (Ok(()), Err(json_error)) => return Err(json_error),
        };
        let still: Vec<_> = match failing {
            None => now,
            Some(before) => now
                .into_iter()
                .filter(|(figure, _)| before.iter().any(|(f, _)| f == figure))
                .collect(),
        };
        if still.is_empty() {
            println!(
                "\n    ok: HAL bench check, every figure within its bound ({:.1} s)",
                started.elapsed().as_secs_f32()
            );
            return Ok(());
        }
        let names: Vec<_> = still.iter().map(|(f, _)| f.as_str()).collect();
        println!(
            "    HAL bench check: past its bound in {}: {}{}",
            if attempt == 1 {
                "run 1".to_string()
            } else {
                format!("each of runs 1 to {attempt}")
            },
            names.join(", "),
            if attempt < HAL_CHECK_RUNS {
                " (measuring again in a new process)"
            } else {
                ""
            }
        );
        failing = Some(still);
    }
    let lines: Vec<_> = failing
        .unwrap_or_default()
        .into_iter()
        .map(|(_, message)| message)
        .collect();
    Err(format!(
        "HAL bench check: past its bound in all {HAL_CHECK_RUNS} runs ({:.1} s):\n  {}",
        started.elapsed().as_secs_f32(),
        lines.join("\n  ")
    ))
}

/// The figures `hal.json` records as past their bounds: (figure, message).
fn hal_failures(json: &std::path::Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    let checks = value["checks"]
        .as_array()
        .ok_or_else(|| format!("{}: no `checks` list", json.display()))?;
    Ok(checks
        .iter()
        .filter_map(|check| {
            let message = check["failure"].as_str()?;
            let figure = check["figure"].as_str().unwrap_or("?");
            Some((figure.to_string(), message.to_string()))
        })
        .collect())
}

/// The Vulkan bench's command: release build, JSON to target/bench/vulkan.json.
fn bench_vulkan_command(flags: &[&str], validation: bool) -> std::process::Command {
    let mut args = vec!["run", "--release", "-p", "ember-bench-vulkan", "--"];
    args.extend_from_slice(flags);
    args.extend(["--json", "target/bench/vulkan.json"]);
    let mut command = cmd("cargo", &args);
    if validation {
        command.env("EMBER_VULKAN_VALIDATION", "1");
    }
    command
}

/// `cargo xtask bench vulkan [--smoke|--full] [--pool-gib N]`: the Vulkan bench on the
/// device `EMBER_VULKAN_DEVICE` names (lavapipe where there is no GPU), writing
/// target/bench/vulkan.json.
pub fn bench_vulkan(smoke: bool, full: bool, pool_gib: Option<u64>) -> Result {
    setup::stable()?;
    setup::vulkan()?;
    let gib = pool_gib.map(|g| g.to_string());
    let mut flags = Vec::new();
    if smoke {
        flags.push("--smoke");
    }
    if full {
        flags.push("--full");
    }
    if let Some(g) = gib.as_deref() {
        flags.extend(["--pool-gib", g]);
    }
    run(
        "Vulkan bench (release): constant-pool load, queue_alloca/dealloca, memoized replay",
        bench_vulkan_command(&flags, false),
    )?;
    let json = root().join("target/bench/vulkan.json");
    if !json.is_file() {
        return Err(format!("the benchmark did not write {}", json.display()));
    }
    Ok(())
}

/// `cargo xtask run --model`: imports and runs a TFLite model on the host board's local
/// device, in release mode (`ember-run`); with `expects`, each output is checked against
/// its `.npy` file (TFLM's) and a difference fails the run.
pub fn run_model(
    model: &str,
    inputs: &[String],
    outputs: &[String],
    expects: &[String],
    workers: usize,
) -> Result {
    setup::stable()?;
    let mut args: Vec<String> = [
        "run",
        "--release",
        "-q",
        "-p",
        "ember-run",
        "--bin",
        "ember-run",
        "--",
    ]
    .map(String::from)
    .to_vec();
    args.push(model.to_string());
    for i in inputs {
        args.extend(["--input".to_string(), i.clone()]);
    }
    for o in outputs {
        args.extend(["--output".to_string(), o.clone()]);
    }
    for e in expects {
        args.extend(["--expect".to_string(), e.clone()]);
    }
    args.extend(["--workers".to_string(), workers.to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let checked = if expects.is_empty() {
        String::new()
    } else {
        format!(", {} output(s) checked (--expect)", expects.len())
    };
    run(
        &format!("run {model} on the host's local device{checked}"),
        cmd("cargo", &args),
    )
}
