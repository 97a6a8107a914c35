//! Builds the modules the firmware embeds, into `OUT_DIR`:
//!
//! - `digits`: the digits MLP, trained here exactly as `cargo xtask run` trains it (the
//!   training is deterministic, so every board gets the same weights), packed with
//!   ember-pack, and embedded with ember-build; with it, the held-out images (one byte per
//!   pixel), their labels, and the float64 reference's predictions, for the device to check
//!   its own answers against.
//! - `model` (feature `model`): the TFLite model whose TensorFlow Lite Micro oracle cases lie
//!   in the directory `EMBER_MODEL_ORACLE` names (`cargo xtask oracle` writes them: the
//!   model's path, each case's inputs and TFLM's outputs). The model is imported and embedded
//!   with `ember-build` as a static program whose arena is at most `EMBER_ARENA_LIMIT`
//!   bytes where that is set (patch-based stages where the plain program would not fit;
//!   feature `patches`: wherever they lower the arena); every case's inputs and TFLM's
//!   outputs are embedded beside it, with the table sizes its device and session need.

use ember_build::Embed;
use ember_digits::{predict_f64, predictions, train, Digits, TrainConfig};
use ember_npy::oracle::Manifest;
use std::path::{Path, PathBuf};

/// The transient arena every board's device gives `queue_alloca` (the firmware reads the same
/// number from the generated `config.rs`).
const TRANSIENT_BYTES: u64 = 1024;

/// Writes only changed files, so Cargo sees nothing new on a rebuild.
fn write(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn digits(out: &Path) {
    let data = Digits::default_path();
    println!("cargo:rerun-if-changed={}", data.display());
    let digits = Digits::load_default().unwrap_or_else(|e| panic!("digits data: {e}"));
    let (train_half, held_out) = digits.split();
    let mlp = train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
    let description = ember_digits::model::description(&mlp);
    let packed = ember_pack::pack(&description, out).unwrap_or_else(|e| panic!("pack: {e}"));
    let module = out.join("digits.ember");
    write(&module, &packed.bytes);
    Embed::new(&module)
        .arena_bytes(TRANSIENT_BYTES)
        .builtin_kernels()
        .build_rs("digits_module.rs");

    let images: Vec<u8> = held_out.images.iter().flatten().copied().collect();
    write(&out.join("held_out_images.bin"), &images);
    write(&out.join("held_out_labels.bin"), &held_out.labels);
    let reference = predictions(&held_out, |x| predict_f64(&mlp, x));
    write(&out.join("held_out_reference.bin"), &reference);
}

/// Fails the build with `message`.
fn fail(message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

/// Rounds `n` up to the device's buffer alignment (64 bytes).
fn aligned(n: u64) -> u64 {
    n.div_ceil(64) * 64
}

fn model(out: &Path) {
    println!("cargo:rerun-if-env-changed=EMBER_MODEL_ORACLE");
    let Some(dir) = std::env::var_os("EMBER_MODEL_ORACLE") else {
        fail("feature `model` needs EMBER_MODEL_ORACLE: the directory of the model's TFLM oracle cases (`cargo xtask run --board B --model M` sets it)".into())
    };
    let dir = PathBuf::from(dir);
    let manifest_path = dir.join("manifest.json");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    let manifest = Manifest::load(&manifest_path)
        .unwrap_or_else(|e| fail(format!("{}: {e}", manifest_path.display())));
    // The static program's arena must fit what the board can give it (`cargo xtask` sets
    // its RAM less what the stack and other statics keep): where the plain program does
    // not, the build runs patch-based stages; where nothing fits, it fails naming the
    // bytes. The HAL path's device is given exactly the arena the module needs.
    println!("cargo:rerun-if-env-changed=EMBER_ARENA_LIMIT");
    let arena_limit = match std::env::var("EMBER_ARENA_LIMIT") {
        Ok(limit) => limit
            .parse()
            .unwrap_or_else(|_| fail(format!("EMBER_ARENA_LIMIT `{limit}` is not a byte count"))),
        Err(_) => u64::from(u32::MAX),
    };
    let embed = Embed::new(&manifest.model)
        .arena_bytes(arena_limit)
        .tflite_kernels()
        .program();
    let embed = if std::env::var_os("CARGO_FEATURE_PATCHES").is_some() {
        embed.patches()
    } else {
        embed
    };
    embed.build_rs("model_module.rs");
    let module_file = out.join("model_module.rs.bin");
    let module_bytes = std::fs::read(&module_file)
        .unwrap_or_else(|e| fail(format!("{}: {e}", module_file.display())));
    let module = hal_core::module::Module::parse(&module_bytes)
        .unwrap_or_else(|e| fail(format!("the embedded module: {e:?}")));
    let Some(function) = module.functions().iter().next() else {
        fail("the imported model has no function".into())
    };
    // Command slots, as the session records the function (see `Session::record`).
    let mut slots = 0u64;
    for step in function.steps.iter() {
        slots += match step {
            hal_core::module::Step::Dispatch {
                constants,
                bindings,
                ..
            } => {
                hal_core::command::dispatch_slots(bindings.len() as usize, constants.len() as usize)
                    as u64
            }
            _ => 1,
        };
    }
    let executables = module.executables().len();
    let constants = module.constants().len();
    let arguments: Vec<u64> = function.arguments.iter().collect();
    let results: Vec<u64> = function.results.iter().collect();
    let io_bytes: u64 = arguments.iter().chain(&results).map(|&n| aligned(n)).sum();

    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut names = Vec::new();
    for case in &manifest.cases {
        let read = |what: &str, arrays: Result<Vec<ember_npy::Array>, ember_npy::Error>| {
            arrays.unwrap_or_else(|e| {
                fail(format!(
                    "{}: case `{}` {what}: {e}",
                    dir.display(),
                    case.name
                ))
            })
        };
        let case_inputs = read("inputs", manifest.read_inputs(case));
        let case_outputs = read("outputs", manifest.read_outputs(case));
        for (array, &size) in case_inputs.iter().zip(&arguments) {
            let bytes = array.data().to_le_bytes();
            if bytes.len() as u64 != size {
                fail(format!(
                    "case `{}`: an input of {} bytes, the model takes {size}",
                    case.name,
                    bytes.len()
                ));
            }
            inputs.extend(bytes);
        }
        for (array, &size) in case_outputs.iter().zip(&results) {
            let bytes = array.data().to_le_bytes();
            if bytes.len() as u64 != size {
                fail(format!(
                    "case `{}`: an output of {} bytes, the model gives {size}",
                    case.name,
                    bytes.len()
                ));
            }
            outputs.extend(bytes);
        }
        names.push(case.name.clone());
    }
    write(&out.join("model_inputs.bin"), &inputs);
    write(&out.join("model_outputs.bin"), &outputs);
    let floats: Vec<bool> = manifest
        .outputs
        .iter()
        .map(|t| t.dtype == ember_npy::DType::F32)
        .collect();
    let list = |v: &[u64]| {
        v.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = manifest
        .model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_owned();
    let config = format!(
        "/// The model's file name, without `.tflite`.\n\
         pub const NAME: &str = {name:?};\n\
         /// The function the model was lowered to.\n\
         pub const FUNCTION: &str = {:?};\n\
         /// Bytes of each input of the model's function.\n\
         pub const INPUT_BYTES: [usize; {}] = [{}];\n\
         /// Bytes of each output.\n\
         pub const OUTPUT_BYTES: [usize; {}] = [{}];\n\
         /// Whether each output is `f32` (compared within 1e-5 relative; others bit for bit).\n\
         pub const FLOAT_OUTPUTS: [bool; {}] = {floats:?};\n\
         /// The oracle cases, in the order their inputs and outputs are embedded.\n\
         pub const CASES: [&str; {}] = {names:?};\n\
         /// Executables and constants of the module: the session's capacities.\n\
         pub const EXECUTABLES: usize = {executables};\n\
         pub const CONSTANTS: usize = {constants};\n\
         /// Command slots the function's recording takes.\n\
         pub const SLOTS: usize = {slots};\n\
         /// Device memory: the arena, every input and output (64-byte aligned) and 256 bytes spare.\n\
         pub const DEVICE_BYTES: usize = {};\n",
        function.name,
        arguments.len(),
        list(&arguments),
        results.len(),
        list(&results),
        floats.len(),
        names.len(),
        // Room for the allocator's block headers and rounding: 256 bytes spare.
        aligned(module.sizes().max_arena) + io_bytes + 256,
    );
    write(&out.join("model_config.rs"), config.as_bytes());
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    if std::env::var_os("CARGO_FEATURE_MODEL").is_some() {
        model(&out);
    }
    digits(&out);
    write(
        &out.join("config.rs"),
        format!("/// The transient arena of every board's device.\npub const TRANSIENT_BYTES: u64 = {TRANSIENT_BYTES};\n").as_bytes(),
    );
}
