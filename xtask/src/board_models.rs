//! The reference models on the QEMU boards: each imported into a board's `model` firmware
//! with TensorFlow Lite Micro's oracle cases embedded (`EMBER_MODEL_ORACLE`), run under
//! `-icount shift=0`, every output checked against TFLM's on the device, and measured: flash,
//! static RAM, peak stack, arena, instructions per inference.

use crate::boards::{self, Board, Outcome};
use crate::oracle;
use crate::size::footprint;
use crate::step::{root, run, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every reference model, by file stem.
pub const ALL: &[&str] = &[
    "hello_world_int8",
    "sine",
    "hello_world_float",
    "micro_speech_quantized",
    "magic_wand",
    "kws_ref_model",
    "ad01_int8",
    "simple_add_model",
    "person_detect",
    "pretrainedResnet_quant",
];

/// The models each QEMU board runs: what fits its memory.
pub const BOARD_MODELS: &[(&str, &[&str])] = &[
    (
        "mps2-an386",
        &[
            "hello_world_int8",
            "sine",
            "micro_speech_quantized",
            "magic_wand",
            "kws_ref_model",
            "ad01_int8",
            "person_detect",
            "pretrainedResnet_quant",
        ],
    ),
    (
        "lm3s6965evb",
        &[
            "hello_world_int8",
            "sine",
            "micro_speech_quantized",
            "kws_ref_model",
        ],
    ),
    ("qemu-virt-riscv32", ALL),
    ("qemu-virt-aarch64", ALL),
];

/// QEMU arguments of every measured run: the virtual clock advances 1 ns per instruction.
pub const ICOUNT: &[&str] = &["-icount", "shift=0"];

/// What one model's firmware reported and weighed.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Bytes in flash: text, rodata, data.
    pub flash: u64,
    /// Bytes of TFLM's cases (inputs and outputs) embedded in that flash, which a product
    /// would not carry: `flash` less these is the engine, the model and the harness.
    pub cases: u64,
    /// Bytes of static RAM: data and bss (the device memory, hence the arena, included).
    pub static_ram: u64,
    /// The firmware's `EMBER-BENCH` fields, by name.
    pub fields: Vec<(String, u64)>,
}

impl Figures {
    /// The reported field `name` (0 where absent).
    pub fn field(&self, name: &str) -> u64 {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, v)| *v)
    }
}

/// The `.tflite` file of a reference model (by stem), or `model` itself if it is a path.
pub fn model_file(model: &str) -> Result<PathBuf> {
    let path = Path::new(model);
    if path.extension().is_some_and(|e| e == "tflite") {
        return Ok(path.to_path_buf());
    }
    let mut found = Vec::new();
    let dir = oracle::models_dir();
    if dir.is_dir() {
        oracle::find_models(&dir, &mut found)?;
    }
    found
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == model))
        .ok_or_else(|| {
            format!(
                "no model `{model}` under {} (give a reference model's file stem — {} — or a .tflite path)",
                dir.display(),
                ALL.join(", ")
            )
        })
}

/// Whether every board's reference models are there; says SKIPPED, loudly, when not (the
/// boards' model runs and the runner's lint need them).
pub fn models_present() -> bool {
    let missing: Vec<&str> = BOARD_MODELS
        .iter()
        .flat_map(|(_, models)| models.iter())
        .filter(|m| model_file(m).is_err())
        .copied()
        .collect();
    if !missing.is_empty() {
        oracle::skipped(&format!(
            "the reference models on the boards: no {} under {} (set EMBER_MODELS to their folder)",
            missing.join(", "),
            oracle::models_dir().display()
        ));
    }
    missing.is_empty()
}

/// How a model firmware runs its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelPath {
    /// The static program `ember-build` emits (every board's `model` firmware).
    Program,
    /// The HAL path: a `Session` over the local device (feature `session`).
    Session,
    /// The static program with the patch-based stages that lower its arena most (feature
    /// `patches`).
    Patches,
}

/// Builds `board`'s `model` firmware for `model`, TFLM's cases embedded, the model run the
/// way `path` says, its arena at most [`boards::arena_limit`]; returns the ELF.
pub fn build_path(board: Board, model: &str, path: ModelPath) -> Result<PathBuf> {
    build_limited(board, model, path, boards::arena_limit(board)?)
}

/// [`build_path`] with the arena at most `arena_limit` bytes (`EMBER_ARENA_LIMIT`): the
/// build runs patch-based stages where the plain program would not fit, and fails naming
/// the bytes where nothing fits.
pub fn build_limited(
    board: Board,
    model: &str,
    path: ModelPath,
    arena_limit: u64,
) -> Result<PathBuf> {
    let file = model_file(model)?;
    let cases = oracle::cases_for(&file)?;
    boards::build_bin(
        board,
        "model",
        match path {
            ModelPath::Program => "model",
            ModelPath::Session => "model,ember-firmware/session",
            ModelPath::Patches => "model,ember-firmware/patches",
        },
        None,
        Some((&cases, arena_limit)),
        &format!(
            "build {}'s model firmware for {}",
            board.name,
            file.display()
        ),
    )
}

/// Bytes of every case's inputs and outputs in the oracle folder `dir`, as the firmware
/// embeds them.
pub fn cases_bytes(dir: &Path) -> Result<u64> {
    let m =
        ember_npy::oracle::Manifest::load(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut total = 0;
    for case in &m.cases {
        let arrays = m
            .read_inputs(case)
            .and_then(|i| Ok((i, m.read_outputs(case)?)));
        let (inputs, outputs) = arrays.map_err(|e| format!("{}: {e}", dir.display()))?;
        for a in inputs.iter().chain(&outputs) {
            total += (a.len() * a.dtype().size()) as u64;
        }
    }
    Ok(total)
}

/// The fields of the `EMBER-BENCH` line in `log`: `key=number` pairs (others skipped).
pub fn bench_fields(log: &str) -> Option<Vec<(String, u64)>> {
    let line = log.lines().find_map(|l| l.split_once("EMBER-BENCH "))?.1;
    Some(
        line.split_whitespace()
            .filter_map(|pair| pair.split_once('='))
            .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
            .collect(),
    )
}

/// Builds and runs `model` on `board` under QEMU with `-icount shift=0`; fails unless every
/// output matched TFLM's. Returns the figures.
pub fn run_model(board: Board, model: &str) -> Result<Figures> {
    run_model_path(board, model, ModelPath::Program)
}

/// [`run_model`], the model run the way `path` says.
pub fn run_model_path(board: Board, model: &str, path: ModelPath) -> Result<Figures> {
    let elf = build_path(board, model, path)?;
    run_elf(board, model, &elf)
}

/// Runs `model`'s firmware `elf` on `board` as [`run_model`] does.
fn run_elf(board: Board, model: &str, elf: &Path) -> Result<Figures> {
    let elf = elf.to_path_buf();
    let size = footprint(&elf)?;
    let cases = cases_bytes(&oracle::cases_for(&model_file(model)?)?)?;
    let (outcome, log) =
        boards::run_qemu_logged(board, &elf, "model", ICOUNT, Duration::from_secs(600))?;
    if outcome != Outcome::Exited(0) {
        return Err(format!("{model} on {}: {}", board.name, outcome.describe()));
    }
    let fields = bench_fields(&log)
        .ok_or_else(|| format!("{model} on {}: no EMBER-BENCH line in its log", board.name))?;
    Ok(Figures {
        flash: size.flash(),
        cases,
        static_ram: size.ram(),
        fields,
    })
}

/// person_detect on mps2-an386 in an arena smaller than its plain program's (32 KiB
/// against 55,344 B): the build runs patch-based stages and every output still equals
/// TFLM's; in one smaller than even those need (16 KiB), the build fails naming the bytes
/// needed and available.
pub fn arena_limits() -> Result {
    let (model, board) = ("person_detect", boards::find("mps2-an386")?);
    let (fits, too_small) = (32 * 1024, 16 * 1024);
    let elf = build_limited(board, model, ModelPath::Program, fits)?;
    let figures = run_elf(board, model, &elf)?;
    if figures.field("arena") > fits {
        return Err(format!(
            "{model} in a {fits}-byte arena: the firmware's arena is {} bytes",
            figures.field("arena")
        ));
    }
    println!(
        "    ok: {model} in a {fits}-byte arena: patch-based stages, a {}-byte arena, every output TFLM's",
        figures.field("arena")
    );
    let cases = oracle::cases_for(&model_file(model)?)?;
    let target = board.target.ok_or("mps2-an386 has a target")?;
    let mut build = boards::cargo(&[
        "build",
        "--release",
        "-p",
        board.name,
        "--target",
        target,
        "--features",
        "model",
        "--bin",
        "model",
    ]);
    build
        .env("EMBER_MODEL_ORACLE", &cases)
        .env("EMBER_ARENA_LIMIT", too_small.to_string());
    let out = build
        .output()
        .map_err(|e| format!("could not start cargo: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let named = format!("arena; the board gives {too_small}");
    if out.status.success() || !stderr.contains("needs a ") || !stderr.contains(&named) {
        return Err(format!(
            "{model} in a {too_small}-byte arena: the build should fail naming the bytes \
             needed and available (`{named}`); it {}:\n{stderr}",
            if out.status.success() {
                "passed"
            } else {
                "failed otherwise"
            }
        ));
    }
    let line = stderr
        .lines()
        .find(|l| l.contains(&named))
        .unwrap_or_default()
        .trim();
    println!("    ok: {model} in a {too_small}-byte arena fails the build: {line}");
    Ok(())
}

/// `cargo xtask run --board B --model M [--patches] [--arena-limit N]`: one model on one
/// QEMU board.
pub fn run_one(board: &str, model: &str, patches: bool, arena_limit: Option<u64>) -> Result {
    let board = boards::find(board)?;
    let path = if patches {
        ModelPath::Patches
    } else {
        ModelPath::Program
    };
    let limit = match arena_limit {
        Some(limit) => limit,
        None => boards::arena_limit(board)?,
    };
    let elf = build_limited(board, model, path, limit)?;
    let f = run_elf(board, model, &elf)?;
    println!(
        "\n{model} on {}: every output equal to TFLM's; {} instructions per inference ({} of them the runtime's own), flash {} B ({} B without TFLM's embedded cases), static RAM {} B, peak stack {} B",
        board.name,
        f.field("instructions"),
        f.field("runtime_overhead"),
        f.flash,
        f.flash - f.cases,
        f.static_ram,
        f.field("stack")
    );
    Ok(())
}

/// Runs every board's models (or only `only`, a model stem, where given); fails on the
/// first that does not match TFLM. Returns (board, model, figures) in order.
pub fn run_all(only: Option<&[&str]>) -> Result<Vec<(&'static str, &'static str, Figures)>> {
    let mut all = Vec::new();
    for (board, models) in BOARD_MODELS {
        let b = boards::find(board)?;
        for model in models.iter().filter(|m| only.is_none_or(|o| o.contains(m))) {
            all.push((*board, *model, run_model(b, model)?));
        }
    }
    Ok(all)
}

/// The boards whose cores have tuned kernels and a heap for the check's cases: mps2-an386
/// (Cortex-M4, the DSP extension), qemu-virt-riscv32 (RV32IMAC) and qemu-virt-aarch64
/// (Cortex-A53), the last two with the register-blocked kernels (lm3s6965evb's Cortex-M3
/// runs them too, but has no heap).
pub const KERNEL_CHECK_BOARDS: &[&str] = &["mps2-an386", "qemu-virt-riscv32", "qemu-virt-aarch64"];

/// The tuned kernels against the portable ones on each of [`KERNEL_CHECK_BOARDS`]: its
/// `kernel-check` binary runs random cases through both, fails on any difference, and times
/// each on layer shapes of the reference models. Returns (board, shape, tuned, portable)
/// instructions.
pub fn kernel_check() -> Result<Vec<(&'static str, String, u64, u64)>> {
    let mut rows = Vec::new();
    for &name in KERNEL_CHECK_BOARDS {
        for (shape, tuned, portable) in kernel_check_on(name)? {
            rows.push((name, shape, tuned, portable));
        }
    }
    Ok(rows)
}

/// [`kernel_check`] on one board.
fn kernel_check_on(name: &str) -> Result<Vec<(String, u64, u64)>> {
    let board = boards::find(name)?;
    boards::build(board)?;
    let elf = boards::elf(board, "kernel-check")?;
    let (outcome, log) = boards::run_qemu_logged(
        board,
        &elf,
        "kernel-check",
        ICOUNT,
        Duration::from_secs(300),
    )?;
    if outcome != Outcome::Exited(0) {
        return Err(format!(
            "the tuned kernels differ from the portable ones on {name}: {}",
            outcome.describe()
        ));
    }
    let mut rows = Vec::new();
    for line in log.lines() {
        // `bench <shape>: tuned N instr, portable M instr, …`
        let Some((shape, rest)) = line
            .split_once("bench ")
            .and_then(|(_, r)| r.split_once(": "))
        else {
            continue;
        };
        let number = |key: &str| -> Option<u64> {
            rest.split_once(key)?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        };
        if let (Some(tuned), Some(portable)) = (number("tuned "), number("portable ")) {
            rows.push((shape.to_owned(), tuned, portable));
        }
    }
    Ok(rows)
}

/// The models MicroFlow's peer firmware (`peers/microflow`) builds, on mps2-an386.
pub const MICROFLOW_MODELS: &[&str] = &["sine", "micro_speech_quantized", "person_detect"];
/// Its two builds: Cargo profile and what the bench calls it.
pub const MICROFLOW_PROFILES: &[(&str, &str)] =
    &[("release", "microflow-O3"), ("release-z", "microflow-Oz")];

/// Builds MicroFlow's firmware for `model` with Cargo `profile` (TFLM's cases from
/// `target/oracle`) and runs it on mps2-an386 exactly as Ember's is run; it compares with TFLM
/// and reports differences, but unlike Ember's it passes with them.
pub fn microflow(model: &str, profile: &str) -> Result<Figures> {
    let board = boards::find("mps2-an386")?;
    let cases = cases_bytes(&oracle::cases_for(&model_file(model)?)?)?;
    let elf = build_microflow(model, profile)?;
    let size = footprint(&elf)?;
    let (program, machine) = board.qemu.unwrap_or_default();
    println!("\n==> MicroFlow's {model} ({profile}) under QEMU");
    let out = std::process::Command::new("timeout")
        .arg("600")
        .arg(program)
        .args(machine)
        .args(ICOUNT)
        .args(["-display", "none", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(&elf)
        .output()
        .map_err(|e| format!("could not start {program}: {e}"))?;
    let log = String::from_utf8_lossy(&out.stdout);
    print!("{log}");
    if !out.status.success() {
        return Err(format!(
            "MicroFlow's {model} ({profile}) under QEMU: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let fields = bench_fields(&log)
        .ok_or_else(|| format!("MicroFlow's {model}: no EMBER-BENCH line in its log"))?;
    Ok(Figures {
        flash: size.flash(),
        cases,
        static_ram: size.ram(),
        fields,
    })
}

/// Builds MicroFlow's firmware `bin` (a model, or `bare`: the harness alone) with cargo
/// profile `profile`; returns its ELF.
fn build_microflow(bin: &str, profile: &str) -> Result<PathBuf> {
    let board = boards::find("mps2-an386")?;
    let target = board.target.unwrap_or_default();
    let dir = root().join("peers").join("microflow");
    let mut build = crate::step::cmd(
        "cargo",
        &[
            "build",
            "--profile",
            profile,
            "--target",
            target,
            "--bin",
            bin,
        ],
    );
    // Its own target folder, whatever the caller's CARGO_TARGET_DIR: the ELF's path below.
    build
        .current_dir(&dir)
        .env_remove("CARGO_TARGET_DIR")
        .env("EMBER_ORACLE_DIR", root().join("target").join("oracle"));
    run(&format!("build MicroFlow's {bin} ({profile})"), build)?;
    Ok(dir.join("target").join(target).join(profile).join(bin))
}

/// Models the bench also runs with the patch-based plan (`ember_patches`), on every board
/// that runs them: those where it lowers the arena.
const PATCHED_MODELS: &[&str] = &["person_detect", "pretrainedResnet_quant"];

/// Where the bench writes its figures.
pub fn bench_json() -> PathBuf {
    root().join("target").join("bench").join("boards.json")
}

/// `cargo xtask bench boards`: every board's models (checked against TFLM as they run), the
/// harness's own footprint (each board's `bare` binary), and MicroFlow's firmware where its
/// peer crate runs; prints the table and writes [`bench_json`].
pub fn bench() -> Result {
    let runs = run_all(None)?;
    let mut json = String::from("{\n  \"measure\": \"instructions per inference under QEMU -icount shift=0 (median of 5 after a warm-up); flash = text+rodata+data, and without TFLM's embedded cases; static_ram = data+bss (device memory and arena included); stack = peak, painted; runtime_overhead = one invocation with no-op kernels\",\n  \"boards\": {\n");
    let mut table = String::from(
        "\n| board | model | engine | instructions | runtime's own | flash B (without cases) | static RAM B | peak stack B | arena B | flash net of harness | RAM net of harness |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    // Each MicroFlow build's harness alone, to net out as Ember's board `bare` is.
    let mut microflow_harness = Vec::new();
    for (profile, name) in MICROFLOW_PROFILES {
        let bare = footprint(&build_microflow("bare", profile)?)?;
        microflow_harness.push((*name, bare));
    }
    for (i, (board, _)) in BOARD_MODELS.iter().enumerate() {
        let b = boards::find(board)?;
        boards::build(b)?;
        let bare = footprint(&boards::elf(b, "bare")?)?;
        json.push_str(&format!(
            "    \"{board}\": {{\n      \"harness\": {{\"flash\": {}, \"static_ram\": {}}},\n      \"models\": {{\n",
            bare.flash(),
            bare.ram()
        ));
        let rows: Vec<_> = runs.iter().filter(|(rb, _, _)| rb == board).collect();
        for (j, (_, model, f)) in rows.iter().enumerate() {
            let mut engines = vec![("ember", f.clone(), bare.clone())];
            if PATCHED_MODELS.contains(model) {
                engines.push((
                    "ember_patches",
                    run_model_path(b, model, ModelPath::Patches)?,
                    bare.clone(),
                ));
            }
            if *board == "mps2-an386" && MICROFLOW_MODELS.contains(model) {
                for ((profile, name), (_, harness)) in
                    MICROFLOW_PROFILES.iter().zip(&microflow_harness)
                {
                    engines.push((name, microflow(model, profile)?, harness.clone()));
                }
            }
            let entries: Vec<String> = engines
                .iter()
                .map(|(engine, f, harness)| {
                    // Net of the harness: flash less the harness's, RAM (static and peak
                    // stack) less the harness's static RAM.
                    let flash_net = (f.flash - f.cases).saturating_sub(harness.flash());
                    let ram_net = (f.static_ram + f.field("stack")).saturating_sub(harness.ram());
                    table.push_str(&format!(
                        "| {board} | {model} | {engine} | {} | {} | {} | {} | {} | {} | {flash_net} | {ram_net} |\n",
                        f.field("instructions"),
                        f.field("runtime_overhead"),
                        f.flash - f.cases,
                        f.static_ram,
                        f.field("stack"),
                        f.field("arena")
                    ));
                    let mut fields = format!(
                        "\"flash\": {}, \"flash_without_cases\": {}, \"static_ram\": {}, \"harness_flash\": {}, \"harness_static_ram\": {}, \"flash_net\": {flash_net}, \"ram_net\": {ram_net}",
                        f.flash,
                        f.flash - f.cases,
                        f.static_ram,
                        harness.flash(),
                        harness.ram()
                    );
                    for (k, v) in &f.fields {
                        fields.push_str(&format!(", \"{k}\": {v}"));
                    }
                    format!("\"{engine}\": {{{fields}}}")
                })
                .collect();
            json.push_str(&format!(
                "        \"{model}\": {{{}}}{}\n",
                entries.join(", "),
                if j + 1 < rows.len() { "," } else { "" }
            ));
        }
        json.push_str(&format!(
            "      }}\n    }}{}\n",
            if i + 1 < BOARD_MODELS.len() { "," } else { "" }
        ));
    }
    json.push_str("  },\n  \"kernels\": [\n");
    table.push_str(
        "\n| board | kernel | tuned | portable | tuned/portable |\n|---|---|---:|---:|---:|\n",
    );
    let kernels = kernel_check()?;
    for (i, (board, shape, tuned, portable)) in kernels.iter().enumerate() {
        let ratio = *tuned as f64 / (*portable).max(1) as f64;
        json.push_str(&format!(
            "    {{\"board\": \"{board}\", \"kernel\": \"{shape}\", \"tuned\": {tuned}, \"portable\": {portable}, \"ratio\": {ratio:.3}}}{}\n",
            if i + 1 < kernels.len() { "," } else { "" }
        ));
        table.push_str(&format!(
            "| {board} | {shape} | {tuned} | {portable} | {ratio:.3} |\n"
        ));
    }
    json.push_str("  ]\n}\n");
    let path = bench_json();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&path, &json).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{table}\nwrote {}", path.display());
    Ok(())
}
