//! `ember-run MODEL.tflite [--input X.npy ...] [--output Y.npy ...] [--expect Y.npy ...]
//! [--workers N] [--repeats N]`: imports a TFLite model, runs it on the host's local device
//! (zeros where no input is given) and prints its outputs (dequantized too), the time per
//! inference and the arena and constant bytes; writes each output as `.npy` when asked, and
//! compares each with an expected `.npy` (TFLM's: int8 bit for bit, float within the
//! oracle's tolerance, `ember_npy::compare::matches_tflm`) when given, failing where one
//! differs. What `cargo xtask run --model` runs, in release mode.

use ember_import::{lower, parse, ElementType, TensorInfo};
use ember_npy::compare::matches_tflm;
use ember_npy::{Array, DType, Data};
use ember_run::run_local;
use std::path::PathBuf;
use std::process::ExitCode;

struct Args {
    model: PathBuf,
    inputs: Vec<PathBuf>,
    outputs: Vec<PathBuf>,
    expects: Vec<PathBuf>,
    workers: usize,
    repeats: usize,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut model = None;
    let (mut inputs, mut outputs, mut expects) = (Vec::new(), Vec::new(), Vec::new());
    let (mut workers, mut repeats) = (1, 20);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--input" => inputs.push(PathBuf::from(value("--input")?)),
            "--output" => outputs.push(PathBuf::from(value("--output")?)),
            "--expect" => expects.push(PathBuf::from(value("--expect")?)),
            "--workers" => workers = value("--workers")?.parse().map_err(|e| format!("{e}"))?,
            "--repeats" => repeats = value("--repeats")?.parse().map_err(|e| format!("{e}"))?,
            _ if model.is_none() && !arg.starts_with("--") => model = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument `{arg}`")),
        }
    }
    Ok(Args {
        model: model.ok_or("give a .tflite model")?,
        inputs,
        outputs,
        expects,
        workers,
        repeats,
    })
}

fn dtype(element: ElementType) -> Result<DType, String> {
    Ok(match element {
        ElementType::Int8 => DType::I8,
        ElementType::Uint8 => DType::U8,
        ElementType::Int16 => DType::I16,
        ElementType::Int32 => DType::I32,
        ElementType::Float32 => DType::F32,
        ElementType::Bool => DType::Bool,
        other => return Err(format!("no .npy type for {other:?}")),
    })
}

/// The input's bytes from `path`, checked against what the model takes.
fn input(info: &TensorInfo, path: &PathBuf) -> Result<Vec<u8>, String> {
    let array = ember_npy::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if array.dtype() != dtype(info.element_type)?
        || array.len() * array.dtype().size() != info.byte_size()
    {
        return Err(format!(
            "{}: {} {:?}, the model's input `{}` is {:?} {:?}",
            path.display(),
            array.dtype().name(),
            array.shape(),
            info.name,
            info.element_type,
            info.shape
        ));
    }
    Ok(array.data().to_le_bytes())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ember-run: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args = args()?;
    let bytes = std::fs::read(&args.model).map_err(|e| format!("{}: {e}", args.model.display()))?;
    let name = args
        .model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let graph = parse(&bytes).map_err(|e| format!("{}: {e}", args.model.display()))?;
    let lowered = lower(&graph, name).map_err(|e| format!("{}: {e}", args.model.display()))?;
    if args.inputs.len() > lowered.inputs.len() {
        return Err(format!(
            "{} inputs given, the model takes {}",
            args.inputs.len(),
            lowered.inputs.len()
        ));
    }
    let mut inputs = Vec::new();
    for (n, info) in lowered.inputs.iter().enumerate() {
        inputs.push(match args.inputs.get(n) {
            Some(path) => input(info, path)?,
            None => vec![0u8; info.byte_size()],
        });
    }
    if args.expects.len() > lowered.outputs.len() {
        return Err(format!(
            "{} expected outputs given, the model has {}",
            args.expects.len(),
            lowered.outputs.len()
        ));
    }
    // Read before the run, so that a missing file fails at once.
    let mut expects = Vec::new();
    for path in &args.expects {
        let array = ember_npy::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        expects.push((path, array));
    }
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let out = run_local(&lowered, &refs, args.workers, args.repeats)?;
    let mut mismatches = Vec::new();
    for (n, (info, bytes)) in lowered.outputs.iter().zip(&out.outputs).enumerate() {
        let dtype = dtype(info.element_type)?;
        let data = Data::from_le_bytes(dtype, bytes).ok_or("output bytes")?;
        println!(
            "output {n} `{}` {:?} {:?}: {}",
            info.name,
            info.element_type,
            info.shape,
            show(&data)
        );
        if let (Some((scale, zero_point)), Data::I8(values)) = (info.quantization, &data) {
            let real: Vec<String> = values
                .iter()
                .map(|&q| {
                    format!(
                        "{:.4}",
                        (f64::from(q) - zero_point as f64) * f64::from(scale)
                    )
                })
                .collect();
            println!("  dequantized: [{}]", shorten(&real));
        }
        if let Some((path, want)) = expects.get(n) {
            match matches_tflm(&data, want.data()) {
                Ok(()) => println!("output {n} equals {}", path.display()),
                Err(e) => {
                    println!("output {n} DIFFERS from {}: {e}", path.display());
                    mismatches.push(format!("output {n} differs from {}: {e}", path.display()));
                }
            }
        }
        if let Some(path) = args.outputs.get(n) {
            let array = Array::new(info.shape.clone(), data).map_err(|e| e.to_string())?;
            ember_npy::write(path, &array).map_err(|e| format!("{}: {e}", path.display()))?;
            println!("  written to {}", path.display());
        }
    }
    println!(
        "time per inference: {:.1} µs (median of {}, {} worker(s)); arena {} B; constants {} B",
        out.per_inference.as_secs_f64() * 1e6,
        args.repeats.max(1),
        args.workers,
        out.arena_bytes,
        out.constant_bytes
    );
    if !mismatches.is_empty() {
        return Err(mismatches.join("; "));
    }
    Ok(())
}

fn show(data: &Data) -> String {
    let items: Vec<String> = match data {
        Data::I8(v) => v.iter().map(i8::to_string).collect(),
        Data::U8(v) => v.iter().map(u8::to_string).collect(),
        Data::I16(v) => v.iter().map(i16::to_string).collect(),
        Data::I32(v) => v.iter().map(i32::to_string).collect(),
        Data::F32(v) => v.iter().map(|x| format!("{x:.6}")).collect(),
        Data::Bool(v) => v.iter().map(bool::to_string).collect(),
    };
    format!("[{}]", shorten(&items))
}

fn shorten(items: &[String]) -> String {
    if items.len() <= 16 {
        items.join(", ")
    } else {
        format!("{}, … ({} values)", items[..16].join(", "), items.len())
    }
}
