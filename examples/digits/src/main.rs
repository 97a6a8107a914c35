//! `ember-digits`: Ember's main job. Trains the digits MLP on the host, packs it as a module
//! (weights as constants), runs every held-out image through the runtime, and checks the
//! runtime's answers against a float64 reference. Fails (exit 1) under 95% accuracy or under
//! 99.9% agreement.
//!
//! Usage: `ember-digits [--device local|vulkan] [DATA.csv.gz]` (default: the local-CPU
//! driver and the repository's `data/digits.csv.gz`). With `--device vulkan` (feature
//! `vulkan`) the module runs on the local driver and on Vulkan, and the run also fails unless
//! both give the same prediction for every image.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ember_digits::{
    evaluate, load, predict_f64, predictions, score, train, Digits, Mlp, Split, TrainConfig,
};
use indicatif::{ProgressBar, ProgressStyle};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The driver the main job runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Driver {
    Local,
    Vulkan,
}

/// `[--device local|vulkan] [DATA.csv.gz]`.
fn arguments() -> Result<(Driver, Option<std::ffi::OsString>), String> {
    let mut driver = Driver::Local;
    let mut data = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--device" {
            driver = match args.next().as_ref().and_then(|d| d.to_str()) {
                Some("local") => Driver::Local,
                Some("vulkan") => Driver::Vulkan,
                other => return Err(format!("--device local|vulkan, not {other:?}")),
            };
        } else if data.is_none() {
            data = Some(arg);
        } else {
            return Err(format!("unexpected argument {arg:?}"));
        }
    }
    Ok((driver, data))
}

/// Runs the module on `driver`.
fn run_module(
    driver: Driver,
    module: &'static [u8],
    features: &[[f32; 64]],
) -> Result<ember_digits::runtime::RunReport, String> {
    match driver {
        Driver::Local => ember_digits::runtime::run(module, features),
        #[cfg(feature = "vulkan")]
        Driver::Vulkan => ember_digits::runtime::run_vulkan(module, features),
        #[cfg(not(feature = "vulkan"))]
        Driver::Vulkan => Err("--device vulkan needs the `vulkan` feature \
             (cargo run -p ember-digits --features vulkan, or cargo xtask run --device vulkan)"
            .into()),
    }
}

fn run() -> Result<(), String> {
    let (driver, data) = arguments()?;
    let digits = match data {
        Some(path) => load(path)?,
        None => Digits::load_default()?,
    };
    let (train_half, held_out) = digits.split();
    println!(
        "digits: {} samples, {} train / {} held out",
        digits.len(),
        train_half.len(),
        held_out.len()
    );

    let config = TrainConfig::default();
    let (mlp, elapsed) = train_with_progress(&train_half, &config);
    println!(
        "trained in {:.3} s (weights fingerprint {:016x})",
        elapsed.as_secs_f64(),
        mlp.fingerprint()
    );

    let reference = predictions(&held_out, |x| predict_f64(&mlp, x));
    println!(
        "f64 reference, held out: {}",
        score(&held_out.labels, &reference)
    );
    println!(
        "f64 reference, train:    {}",
        evaluate(&train_half, |x| predict_f64(&mlp, x))
    );

    let held_out_features = held_out.features();
    let (module, unshared) = pack(&mlp)?;
    let report = run_module(driver, module, &held_out_features)?;
    println!("driver:                   {driver:?}");
    let runtime = &report.predictions;
    if driver != Driver::Local {
        let local = ember_digits::runtime::run(module, &held_out_features)?;
        let same = score(&local.predictions, runtime);
        println!("same as the local driver: {same}");
        if same.fraction() < 1.0 {
            return Err(format!(
                "{driver:?} and the local driver disagree: {same} equal"
            ));
        }
    }
    let accuracy = score(&held_out.labels, runtime);
    let agreement = score(&reference, runtime);
    println!("runtime, held out:        {accuracy}");
    println!("runtime vs f64 reference: {agreement}");
    let per = report.elapsed.as_secs_f64() / runtime.len() as f64;
    println!(
        "time per inference:       {:.2} µs (upload, invoke, read back; {} images in {:.1} ms)",
        per * 1e6,
        runtime.len(),
        report.elapsed.as_secs_f64() * 1e3
    );
    let sizes = hal_core::module::Module::parse(module)
        .map_err(|e| e.to_string())?
        .sizes();
    println!(
        "module:                   {} bytes ({} header, {} constant pool)",
        sizes.file, sizes.header, sizes.pool
    );
    let s = report.session;
    println!(
        "constants:                {} bytes ({} imported in place, {} streamed)",
        sizes.constants, s.imported_bytes, s.streamed_bytes
    );
    println!(
        "arena peak:               {} bytes (one queue_alloca per inference; {} without reuse)",
        s.arena_peak, unshared
    );
    let region = match driver {
        Driver::Local => format!(
            " of a {} KiB region",
            ember_digits::runtime::REGION_BYTES / 1024
        ),
        Driver::Vulkan => String::new(),
    };
    println!(
        "runtime tables:           {} bytes device + {} bytes session; device heap peak {} bytes{region}",
        report.device_table_bytes, report.session_table_bytes, report.heap_peak_bytes,
    );
    println!(
        "command buffer:           recorded {}×, replayed {}×",
        s.recorded, s.replayed
    );
    if accuracy.fraction() < 0.95 {
        return Err(format!("accuracy {accuracy} is under 95%"));
    }
    if agreement.fraction() < 0.999 {
        return Err(format!(
            "runtime agrees with the f64 reference on only {agreement}"
        ));
    }
    Ok(())
}

/// Writes the module description (`target/digits/digits.json`), packs it with `ember-pack`
/// into `target/digits/digits.ember`, and returns the module's bytes at a 64-byte-aligned
/// address that lives for the program (so constants can be imported in place), and the
/// arena the plan would need without reuse.
fn pack(mlp: &Mlp) -> Result<(&'static [u8], u64), String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/digits");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let json_path = dir.join("digits.json");
    let json = serde_json::to_string_pretty(&ember_digits::model::description(mlp))
        .map_err(|e| e.to_string())?;
    std::fs::write(&json_path, json).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let packed = ember_pack::pack_file(&json_path).map_err(|e| e.to_string())?;
    let module_path = dir.join("digits.ember");
    std::fs::write(&module_path, &packed.bytes)
        .map_err(|e| format!("{}: {e}", module_path.display()))?;
    println!(
        "packed {} → {} ({} bytes)",
        json_path.display(),
        module_path.display(),
        packed.bytes.len()
    );
    let unshared = packed.unshared.iter().copied().max().unwrap_or(0);
    Ok((leak_aligned(&packed.bytes), unshared))
}

/// `bytes` copied to a 64-byte-aligned allocation that is never freed.
fn leak_aligned(bytes: &[u8]) -> &'static [u8] {
    let blocks: &'static mut [[u8; 64]] =
        Box::leak(vec![[0u8; 64]; bytes.len().div_ceil(64)].into_boxed_slice());
    let flat = blocks.as_flattened_mut();
    flat[..bytes.len()].copy_from_slice(bytes);
    &flat[..bytes.len()]
}

/// Trains with an `indicatif` bar that advances per epoch and shows loss and train accuracy.
fn train_with_progress(train_half: &Split, config: &TrainConfig) -> (Mlp, Duration) {
    let bar = ProgressBar::new(config.epochs as u64);
    bar.set_style(
        ProgressStyle::with_template("epoch {pos:>3}/{len} [{bar:30}] {msg} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut last = (0.0, 0.0);
    let start = Instant::now();
    let mlp = train(train_half, config, |epoch, _epochs, loss, accuracy| {
        bar.set_message(format!(
            "loss {loss:.4}  train acc {:.2}%",
            100.0 * accuracy
        ));
        bar.set_position(epoch as u64);
        last = (loss, accuracy);
    });
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    println!(
        "{} epochs: final loss {:.4}, train acc {:.2}% (during the last epoch)",
        config.epochs,
        last.0,
        100.0 * last.1
    );
    (mlp, elapsed)
}
