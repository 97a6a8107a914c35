//! `cargo xtask`: Ember's build, test and benchmark driver.
//!
//! Every command first checks what it needs (rustup targets and components, the nightly
//! toolchain for Miri) and installs it when it can, or stops with the exact command to run.
//! Each step prints the command it runs; the first failing step stops the run with its exit
//! status. Nothing is skipped silently.
//!
//! ```text
//! cargo xtask test          # fmt, TFLM oracle, boards + size, clippy, tests, HAL bench check, no_std builds, Miri
//! cargo xtask run           # the main job on the emulated host board
//! cargo xtask run --board mps2-an386   # build a board's firmware, run it under QEMU, decode its logs
//! cargo xtask run --model m.tflite [--input x.npy] [--output y.npy] [--expect y.npy]   # a TFLite model on the host, its outputs checked against TFLM's
//! cargo xtask run --board mps2-an386 --model kws_ref_model   # a reference model on a board, checked against TFLM
//! cargo xtask run --board mps2-an386 --model person_detect --patches   # with patch-based stages
//! cargo xtask build --board lm3s6965evb
//! cargo xtask size          # flash and RAM per board → target/bench/size.json; runtime alone ≤ 12 KiB
//! cargo xtask bench alloc   # allocator benchmark → target/bench/alloc.json
//! cargo xtask bench hal     # dispatch replay, queue_alloca, memoization → target/bench/hal.json
//! cargo xtask bench hal --check   # fails when a figure passes its bound against its same-run baseline
//! cargo xtask bench module  # module load time vs pool size, digits inference → target/bench/module.json
//! cargo xtask bench boards  # each board's models, instructions/flash/RAM, beside MicroFlow → target/bench/boards.json
//! cargo xtask bench models  # each reference model: Ember vs TFLM's interpreter and IREE → target/bench/models.json
//! cargo xtask pack desc.json -o out.ember   # pack a module from its JSON description
//! cargo xtask import model.tflite   # a TFLite model's ops, tensors and arena plan
//! cargo xtask fuzz module   # cargo-fuzz on Module::parse for 60 s (--seconds N)
//! cargo xtask fuzz import   # cargo-fuzz on the TFLite importer, seeded with the reference models
//! cargo xtask oracle m.tflite   # TFLM's own interpreter: inputs and outputs → target/oracle/m/
//! cargo xtask oracle --all  # every model in ../shared/models ($EMBER_MODELS), each checked
//! cargo xtask oracle --ops [--count N] [--seed S]  # N random single-op models per op variant → target/oracle-ops/
//! cargo xtask oracle --large  # a 333-transient model and one of 6.3 MB of constants → target/oracle-large/
//! ```

mod background;
mod board_models;
mod boards;
mod cores;
mod fuzz;
mod import;
mod iree;
mod miri;
mod oracle;
mod pack;
mod setup;
mod size;
mod step;
mod tasks;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Ember's build, test and benchmark driver"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every check CI runs: formatting, clippy -D warnings, all tests, the HAL bench check,
    /// no_std cross builds, the boards and their footprint bounds, Miri over the crates with
    /// unsafe-free invariants to prove.
    Test {
        /// Skip Miri (for a quick local loop; CI never passes this).
        #[arg(long)]
        no_miri: bool,
    },
    /// The main job, on the emulated host board by default; on a QEMU board, builds its
    /// firmware, runs it under QEMU and decodes its logs.
    Run {
        /// host, mps2-an386, lm3s6965evb, qemu-virt-riscv32 or qemu-virt-aarch64.
        #[arg(long, default_value = "host")]
        board: String,
        /// The host board's driver for the main job: local, or vulkan (the main job on the
        /// Vulkan driver, checked against the local driver's predictions).
        #[arg(long, default_value = "local")]
        device: String,
        /// A TFLite model to import and run instead of the main job. On the host board: its
        /// outputs (dequantized too), time per inference, arena and constant bytes, and each
        /// output checked against its `--expect` file where given. On a QEMU
        /// board (a reference model's file stem, or a .tflite path): built into the board's
        /// `model` firmware with TFLM's outputs, checked on the device, instructions per
        /// inference counted.
        #[arg(long)]
        model: Option<String>,
        /// With `--model`: an input as `.npy`, once per model input in order (zeros where
        /// none is given).
        #[arg(long)]
        input: Vec<String>,
        /// With `--model`: where to write each output as `.npy`, in order.
        #[arg(long)]
        output: Vec<String>,
        /// With `--model` on the host board: each output's expected values as `.npy`, in
        /// order (TFLM's, as `cargo xtask oracle` writes them): int8 and the other integer
        /// types must be equal bit for bit, float32 within the oracle's tolerance
        /// (`ember_npy::compare::matches_tflm`); a difference fails the run, naming it.
        #[arg(long)]
        expect: Vec<String>,
        /// With `--model`: workers for the local device.
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// qemu-virt-aarch64: 2 runs the firmware on two cores (`-smp 2`, multi-threaded
        /// TCG); with `--model`, the model on one core and on two in one run.
        #[arg(long, default_value_t = 1)]
        cores: usize,
        /// With `--model` on a QEMU board: the static program with the patch-based stages
        /// that lower its arena most.
        #[arg(long)]
        patches: bool,
        /// With `--model` on a QEMU board: the most bytes the static program's arena may
        /// take (default: the board's RAM less 16 KiB); patch-based stages where the
        /// plain program would not fit, a build error naming the bytes where nothing does.
        #[arg(long)]
        arena_limit: Option<u64>,
    },
    /// Builds a board's firmware (release, size-optimized) under boards/target.
    Build {
        /// host, mps2-an386, lm3s6965evb, qemu-virt-riscv32 or qemu-virt-aarch64.
        #[arg(long)]
        board: String,
    },
    /// Flash and RAM of every QEMU board's firmware → target/bench/size.json; fails when the
    /// runtime alone passes its bound (12 KiB on mps2-an386).
    Size,
    /// Benchmarks, run in release mode, each writing target/bench/<name>.json.
    Bench {
        /// Which benchmark.
        #[arg(value_enum)]
        which: Bench,
        /// vulkan: small sizes (the default on CPU devices such as lavapipe).
        #[arg(long)]
        smoke: bool,
        /// vulkan: full sizes even on a CPU device.
        #[arg(long, conflicts_with = "smoke")]
        full: bool,
        /// vulkan: the constant pool in GiB (default: 64, or what the device holds).
        #[arg(long)]
        pool_gib: Option<u64>,
        /// hal: a short run that fails when a figure's ratio to its same-run baseline passes
        /// the bound beside it in tests/benches/hal.rs (`cargo xtask test` runs it).
        #[arg(long)]
        check: bool,
    },
    /// Packs a module from a JSON description (see the `ember-pack` crate).
    Pack {
        /// The description.
        description: std::path::PathBuf,
        /// Where to write the module (default: the description's path with `.ember`).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// Parses and validates a TensorFlow Lite model (see the `ember-import` crate) and prints
    /// its op table, constants, tensors and static memory plan.
    Import {
        /// The `.tflite` file.
        model: std::path::PathBuf,
        /// Where to write the Ember module (not implemented yet: refused).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// A cargo-fuzz target of fuzz/, from its seeds, on nightly.
    Fuzz {
        /// Which target.
        #[arg(value_enum)]
        target: FuzzTarget,
        /// How long to fuzz.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
    },
    /// TFLM's own interpreter (PyPI tflite-micro, pinned, in target/oracle-venv) on a
    /// .tflite model: the all-zero input and seeded random ones, their outputs as .npy files
    /// and a manifest.json, read back and checked.
    Oracle {
        /// The model.
        #[arg(required_unless_present_any = ["all", "ops", "large"])]
        model: Option<std::path::PathBuf>,
        /// Every .tflite under $EMBER_MODELS (default ../shared/models), each into
        /// target/oracle/<stem>/, person_detect on its two BMPs too; says SKIPPED when
        /// the models are absent.
        #[arg(long, conflicts_with_all = ["model", "output", "bmp", "inputs", "ops", "large"])]
        all: bool,
        /// Randomized single-op models of every op variant Ember supports, each run
        /// through TFLM, into target/oracle-ops/<variant>/<n>/ (what
        /// ember-run/tests/op_oracle.rs compares Ember with).
        #[arg(long, conflicts_with_all = ["model", "output", "bmp", "inputs"])]
        ops: bool,
        /// Two large int8 models built by xtask/oracle/large_models.py, each run through
        /// TFLM into target/oracle-large/<name>/: deep_int8 (110 residual blocks, 333
        /// transients) and large_int8 (6.3 MB of constants); what `cargo xtask test` runs
        /// Ember on, every output checked against TFLM's.
        #[arg(long, conflicts_with_all = ["model", "output", "bmp", "inputs", "ops"])]
        large: bool,
        /// With --ops: models per op variant.
        #[arg(long, default_value_t = 100, requires = "ops")]
        count: u32,
        /// With --ops: the seed every model's parameters are drawn from.
        #[arg(long, default_value_t = 0, requires = "ops")]
        seed: u64,
        /// Random input sets, seeds 0 to N-1, after the all-zero one.
        #[arg(long, default_value_t = 3)]
        seeds: u32,
        /// Output folder (default: target/oracle/<model stem>/).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
        /// An 8-bit BMP as the model's one input, rows top first, raw bytes (repeatable).
        #[arg(long)]
        bmp: Vec<std::path::PathBuf>,
        /// One more case from .npy files, one per model input, in order.
        #[arg(long, num_args = 1..)]
        inputs: Vec<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Bench {
    /// Device-memory allocators against offset-allocator, rlsf, talc, linked_list_allocator.
    Alloc,
    /// The local driver: dispatch replay, queue-ordered allocation, memoization's gain.
    Hal,
    /// Modules: load time against the constant pool's size; time per digits inference.
    Module,
    /// Each reference model ($EMBER_MODELS, default ../shared/models) on the local device
    /// against TFLM's interpreter and IREE's CPU runtime (installed in target/iree-venv)
    /// in the same run: time per inference, arenas, constants, IREE's outputs against TFLM's.
    Models,
    /// The reference models on every QEMU board under `-icount shift=0`, checked against
    /// TFLM on the device, and MicroFlow's firmware on mps2-an386 measured the same way:
    /// flash, static RAM, peak stack, instructions per inference → target/bench/boards.json.
    Boards,
    /// Every reference model on qemu-virt-aarch64 on one core and on two (`-smp 2`,
    /// multi-threaded TCG), checked against TFLM in both → target/bench/cores.json.
    Cores,
    /// The Vulkan driver on any Vulkan device: a 64 GiB constant pool against
    /// vkCmdCopyBuffer, queue_alloca/dealloca, memoized replay against re-recording.
    Vulkan,
}

#[derive(Clone, Copy, ValueEnum)]
enum FuzzTarget {
    /// `Module::parse` on arbitrary bytes, then everything a parsed module offers.
    Module,
    /// The TFLite importer on arbitrary bytes, seeded with the reference models; then the
    /// memory plan of what it accepts.
    Import,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Test { no_miri } => tasks::test(!no_miri),
        Command::Run {
            board,
            device,
            model,
            input,
            output,
            expect,
            workers,
            cores,
            patches,
            arena_limit,
        } => match (model, cores) {
            _ if !expect.is_empty() && (board != "host" || device != "local") => Err(
                "--expect is for --model on the host board's local device (a QEMU board \
                 checks its model against TFLM on the device)"
                    .to_string(),
            ),
            (Some(model), 2) if board == cores::BOARD => cores::run_one(&model, false),
            (None, 2) if board == cores::BOARD => cores::firmware(),
            (_, n) if n != 1 => Err(format!(
                "--cores 2 runs on {} (--cores 1 anywhere), not --cores {n} on {board}",
                cores::BOARD
            )),
            (Some(model), _) if board == "host" && device == "local" => {
                tasks::run_model(&model, &input, &output, &expect, workers)
            }
            (Some(model), _) if board != "host" && device == "local" => {
                board_models::run_one(&board, &model, patches, arena_limit)
            }
            (Some(_), _) => Err("--model runs on the local driver".to_string()),
            (None, _) => tasks::run_board(&board, &device),
        },
        Command::Build { board } => boards::find(&board).and_then(boards::build),
        Command::Size => size::size(),
        Command::Bench {
            which,
            smoke,
            full,
            pool_gib,
            check,
        } => match which {
            Bench::Hal if check => tasks::bench_hal_check(),
            _ if check => Err("--check is for `bench hal`".to_string()),
            Bench::Alloc => tasks::bench("alloc", "allocator benchmark"),
            Bench::Hal => tasks::bench("hal", "HAL benchmark on the local driver"),
            Bench::Module => tasks::bench("module", "module benchmark"),
            Bench::Models => tasks::bench_models(),
            Bench::Boards => board_models::bench(),
            Bench::Cores => cores::bench(),
            Bench::Vulkan => tasks::bench_vulkan(smoke, full, pool_gib),
        },
        Command::Pack {
            description,
            output,
        } => pack::pack(&description, output.as_deref()),
        Command::Import { model, output } => import::import(&model, output.as_deref()),
        Command::Fuzz { target, seconds } => match target {
            FuzzTarget::Module => fuzz::fuzz("module", seconds),
            FuzzTarget::Import => fuzz::fuzz("import", seconds),
        },
        Command::Oracle {
            all: true, seeds, ..
        } => oracle::all(seeds),
        Command::Oracle {
            ops: true,
            count,
            seed,
            ..
        } => oracle::ops(count, seed),
        Command::Oracle { large: true, .. } => oracle::large(),
        Command::Oracle {
            model,
            seeds,
            output,
            bmp,
            inputs,
            ..
        } => match model {
            Some(model) => oracle::oracle(&oracle::Request {
                model: &model,
                seeds,
                output: output.as_deref(),
                bmp: &bmp,
                inputs: &inputs,
            }),
            None => Err("give a model, or --all".to_string()),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nxtask: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
