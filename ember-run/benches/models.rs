//! Models benchmark: time per inference of each reference model on the host's local device
//! (Ember), against TensorFlow Lite Micro's interpreter and IREE's CPU runtime timed on the
//! same machine in the same run.
//!
//! `cargo xtask bench models` (which makes the oracle's venv and IREE's, compiles each model
//! for IREE, and says SKIPPED, loudly, when the models are absent), or
//! `cargo bench -p ember-run --bench models` with `EMBER_TFLM_PYTHON` naming a Python that
//! has the `tflite-micro` package (default: `target/oracle-venv/bin/python`), the models at
//! `$EMBER_MODELS` (default: `../shared/models`) and, for IREE, `EMBER_IREE_PYTHON` (IREE's
//! venv) and `EMBER_IREE_MODULES` (`target/iree/modules.json`: each model's `.vmfb`) — or
//! `EMBER_IREE_ERROR`, why IREE could not be installed; `EMBER_BENCH_QUICK=1` for a tiny
//! run. Prints a table and writes `target/bench/models.json`.
//!
//! For every `.tflite` under the models folder, every side gets the oracle's seeded random
//! inputs (seed 0: `ember_npy::oracle::random_input`, `tflm_oracle.py`'s generator), written
//! once; Ember's outputs are checked against TFLM's before anything is timed (integers
//! equal, floats within 1e-5 relative), and IREE's are compared with TFLM's (the largest
//! difference is recorded, not held to a bound: IREE's int8 arithmetic may round
//! differently). Then, in `ROUNDS` rounds, each starting with the next side, each side
//! measures one thing, the same way:
//! - Ember: `Session::invoke` alone ([`LocalModel::invoke`]: the arena's `queue_alloca`, the
//!   memoized command buffer's replay, `queue_dealloca`, the wait), one worker;
//! - TFLM: `interp.invoke()` alone in Python (`xtask/oracle/tflm_bench.py`, one process per
//!   model kept for all its rounds), TFLM's reference kernels;
//! - IREE: the compiled module's `main` alone in Python (`xtask/oracle/iree_bench.py`, one
//!   process per model), on the synchronous `local-sync` device, inputs uploaded once;
//!
//! a warm-up of at least 3 calls and `WARMUP_MS`, then `BATCHES` batches of N back-to-back
//! calls (N such that a batch takes about `BATCH_MS`), each batch's time over N one figure.
//! A side's time per inference is the median of all its figures over the rounds; the round
//! medians give the spread. Whatever goes wrong on IREE's side (not installed, a model that
//! does not compile, a crash) is said loudly per model and recorded; the other figures are
//! written all the same.

use ember_import::{lower, parse, ElementType, Lowered};
use ember_npy::oracle::random_input;
use ember_npy::{DType, Data};
use ember_run::LocalModel;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The oracle's seed for the random inputs.
const SEED: u32 = 0;

/// How a side is measured; both sides get the same.
#[derive(Clone, Copy)]
struct Plan {
    rounds: usize,
    batches: usize,
    batch_ms: f64,
    warmup_ms: f64,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                rounds: 1,
                batches: 5,
                batch_ms: 2.0,
                warmup_ms: 5.0,
            }
        } else {
            Plan {
                rounds: 3,
                batches: 21,
                batch_ms: 20.0,
                warmup_ms: 50.0,
            }
        }
    }
}

/// Median of `values` (the mean of the middle two for an even count), as Python's
/// `statistics.median`.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One measurement of `call`: what `tflm_bench.py`'s `measure` does, in Rust.
fn measure(plan: &Plan, mut call: impl FnMut()) -> Value {
    let warmup = Duration::from_secs_f64(plan.warmup_ms / 1e3);
    let start = Instant::now();
    let mut n = 0u32;
    while n < 3 || start.elapsed() < warmup {
        call();
        n += 1;
    }
    let per_call = start.elapsed().as_nanos() as f64 / f64::from(n);
    let calls = ((plan.batch_ms * 1e6 / per_call).round() as u64).max(1);
    let figures: Vec<f64> = (0..plan.batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                call();
            }
            t.elapsed().as_nanos() as f64 / calls as f64
        })
        .collect();
    json!({
        "median_ns": median(&figures),
        "min_ns": figures.iter().copied().fold(f64::INFINITY, f64::min),
        "max_ns": figures.iter().copied().fold(0.0, f64::max),
        "calls_per_batch": calls,
        "batches": plan.batches,
        "figures_ns": figures,
    })
}

/// A side's rounds summed up: the median of every figure, and the round medians' range.
fn summary(rounds: &[Value]) -> Value {
    let all: Vec<f64> = rounds
        .iter()
        .flat_map(|r| r["figures_ns"].as_array().expect("figures").iter())
        .filter_map(Value::as_f64)
        .collect();
    let medians: Vec<f64> = rounds
        .iter()
        .filter_map(|r| r["median_ns"].as_f64())
        .collect();
    let strip = |r: &Value| {
        let mut r = r.clone();
        if let Some(o) = r.as_object_mut() {
            o.remove("figures_ns");
        }
        r
    };
    json!({
        "median_ns": median(&all),
        "round_median_min_ns": medians.iter().copied().fold(f64::INFINITY, f64::min),
        "round_median_max_ns": medians.iter().copied().fold(0.0, f64::max),
        "rounds": rounds.iter().map(strip).collect::<Vec<_>>(),
    })
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn models_dir() -> PathBuf {
    let dir = match std::env::var_os("EMBER_MODELS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace().join("..").join("shared").join("models"),
    };
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

fn find_models(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_models(&path, found);
        } else if path.extension().is_some_and(|e| e == "tflite") {
            found.push(path);
        }
    }
}

fn json_path() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace().join(dir),
        _ => workspace().join("target"),
    };
    target.join("bench").join("models.json")
}

fn loudly(what: &str) {
    let bar = "!".repeat(78);
    println!("\n{bar}\n!!! {what}\n{bar}");
    eprintln!("bench models: {what}");
}

fn dtype(element: ElementType) -> Result<DType, String> {
    Ok(match element {
        ElementType::Int8 => DType::I8,
        ElementType::Uint8 => DType::U8,
        ElementType::Int16 => DType::I16,
        ElementType::Int32 => DType::I32,
        ElementType::Float32 => DType::F32,
        other => return Err(format!("no generator for {other:?} inputs")),
    })
}

/// Whether Ember's outputs are TFLM's (`header["outputs"]`): integers equal, floats within
/// 1e-5 relative (1e-6 absolute near zero), as the model tests hold them.
fn check_outputs(lowered: &Lowered, ember: &[Vec<u8>], tflm: &Value) -> Result<(), String> {
    let tflm = tflm.as_array().ok_or("TFLM gave no outputs")?;
    if tflm.len() != ember.len() {
        return Err(format!("{} outputs, TFLM gave {}", ember.len(), tflm.len()));
    }
    for (n, ((info, bytes), want)) in lowered.outputs.iter().zip(ember).zip(tflm).enumerate() {
        let data = Data::from_le_bytes(dtype(info.element_type)?, bytes).ok_or("output bytes")?;
        let got: Vec<f64> = match &data {
            Data::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::I16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::Bool(v) => v.iter().map(|&x| f64::from(u8::from(x))).collect(),
        };
        let want: Vec<f64> = want["values"]
            .as_array()
            .ok_or("TFLM's output values")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        if got.len() != want.len() {
            return Err(format!(
                "output {n}: {} values, TFLM gave {}",
                got.len(),
                want.len()
            ));
        }
        let float = matches!(data, Data::F32(_));
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            let ok = if float {
                (a - b).abs() <= (b.abs() * 1e-5).max(1e-6)
            } else {
                a == b
            };
            if !ok {
                return Err(format!("output {n} element {i}: {a}, TFLM's {b}"));
            }
        }
    }
    Ok(())
}

/// A Python side of one model (`tflm_bench.py`, `iree_bench.py`), kept running for the
/// model's rounds and asked for each measurement over stdin.
struct Peer {
    script: &'static str,
    /// Where its stderr goes: read back when it stops.
    log: PathBuf,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts `xtask/oracle/<script>` with `args` and the plan's, its stderr into `log`;
    /// returns it and its header line.
    fn start(
        python: &Path,
        script: &'static str,
        args: &[&std::ffi::OsStr],
        plan: &Plan,
        log: PathBuf,
    ) -> Result<(Self, Value), String> {
        let path = workspace().join("xtask/oracle").join(script);
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let stderr = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(python)
            .arg(&path)
            .args(args)
            .args(["--batches", &plan.batches.to_string()])
            .args(["--batch-ms", &plan.batch_ms.to_string()])
            .args(["--warmup-ms", &plan.warmup_ms.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let stdin = child.stdin.take().ok_or("the script's stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("the script's stdout")?);
        let mut peer = Peer {
            script,
            log,
            child,
            stdin,
            stdout,
        };
        let header = peer.line()?;
        Ok((peer, header))
    }

    fn line(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| format!("reading {}: {e}", self.script))?;
        if line.is_empty() {
            let _ = self.child.wait();
            return Err(format!(
                "{} stopped: {}",
                self.script,
                stderr_tail(&self.log)
            ));
        }
        serde_json::from_str(&line).map_err(|e| format!("{}'s answer: {e}", self.script))
    }

    fn time(&mut self) -> Result<Value, String> {
        writeln!(self.stdin, "time").map_err(|e| format!("{}: {e}", self.script))?;
        self.stdin
            .flush()
            .map_err(|e| format!("{}: {e}", self.script))?;
        self.line()
    }

    fn finish(mut self) -> Result<(), String> {
        let _ = writeln!(self.stdin, "quit");
        drop(self.stdin);
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} exited with {status}: {}",
                self.script,
                stderr_tail(&self.log)
            ))
        }
    }
}

/// The last lines of what a peer wrote to stderr (its `log`).
fn stderr_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(4)..].join(" | ");
    format!("{tail} (all of it in {})", log.display())
}

/// IREE's side, as `cargo xtask bench models` hands it over: the Python of IREE's venv and
/// each model's `.vmfb` (`target/iree/modules.json`, written by `xtask/src/iree.rs`), or why
/// IREE is not measured.
enum Iree {
    Ready {
        python: PathBuf,
        /// Model path → its `.vmfb`, or why it has none.
        modules: Vec<(PathBuf, Result<PathBuf, String>)>,
    },
    Absent(String),
}

impl Iree {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(e) = var("EMBER_IREE_ERROR") {
            return Iree::Absent(e.to_string_lossy().into_owned());
        }
        let (Some(python), Some(manifest)) = (var("EMBER_IREE_PYTHON"), var("EMBER_IREE_MODULES"))
        else {
            return Iree::Absent(
                "EMBER_IREE_PYTHON and EMBER_IREE_MODULES are not set (`cargo xtask bench \
                 models` installs IREE and compiles the models for it)"
                    .into(),
            );
        };
        let manifest = PathBuf::from(manifest);
        let read = std::fs::read_to_string(&manifest)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()));
        let json = match read {
            Ok(json) => json,
            Err(e) => return Iree::Absent(format!("{}: {e}", manifest.display())),
        };
        let modules = json["models"]
            .as_array()
            .map(|models| {
                models
                    .iter()
                    .map(|m| {
                        let model = PathBuf::from(m["model"].as_str().unwrap_or_default());
                        let vmfb = match (m["vmfb"].as_str(), m["error"].as_str()) {
                            (Some(v), _) => Ok(PathBuf::from(v)),
                            (None, e) => Err(e.unwrap_or("no .vmfb").to_string()),
                        };
                        (model, vmfb)
                    })
                    .collect()
            })
            .unwrap_or_default();
        Iree::Ready {
            python: PathBuf::from(python),
            modules,
        }
    }

    /// The Python and the `.vmfb` for `model`, or why there are none.
    fn module(&self, model: &Path) -> Result<(&Path, &Path), String> {
        match self {
            Iree::Absent(why) => Err(why.clone()),
            Iree::Ready { python, modules } => {
                let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or(p.to_path_buf());
                let found = modules
                    .iter()
                    .find(|(m, _)| canonical(m) == canonical(model));
                match found {
                    Some((_, Ok(vmfb))) => Ok((python, vmfb)),
                    Some((_, Err(e))) => Err(e.clone()),
                    None => Err("not compiled for IREE (not in target/iree/modules.json)".into()),
                }
            }
        }
    }
}

/// IREE's outputs against TFLM's (`header["outputs"]` of each): the largest |difference|,
/// how many values differ, of how many. Shapes must agree; values need not.
fn compare_outputs(iree: &Value, tflm: &Value) -> Result<Value, String> {
    let (iree, tflm) = (
        iree.as_array().ok_or("IREE gave no outputs")?,
        tflm.as_array().ok_or("TFLM gave no outputs")?,
    );
    if iree.len() != tflm.len() {
        return Err(format!(
            "IREE gave {} outputs, TFLM {}",
            iree.len(),
            tflm.len()
        ));
    }
    let (mut max, mut differing, mut values) = (0.0f64, 0usize, 0usize);
    for (n, (a, b)) in iree.iter().zip(tflm).enumerate() {
        let numbers = |v: &Value| -> Vec<f64> {
            v["values"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default()
        };
        let (a, b) = (numbers(a), numbers(b));
        if a.len() != b.len() {
            return Err(format!(
                "output {n}: IREE gave {} values, TFLM {}",
                a.len(),
                b.len()
            ));
        }
        for (x, y) in a.iter().zip(&b) {
            let d = (x - y).abs();
            max = max.max(d);
            differing += usize::from(d != 0.0);
        }
        values += a.len();
    }
    Ok(json!({ "max_abs_diff": max, "differing": differing, "values": values }))
}

/// The file name `name` (a model's path under the models folder) gives its inputs.
fn flat(name: &str) -> String {
    name.replace(['/', '\\'], "-")
}

/// IREE's side of one model once started: the process, its header, and its outputs held
/// against TFLM's.
struct IreeSide {
    peer: Peer,
    header: Value,
    outputs: Value,
}

/// Starts IREE on `model`'s `.vmfb` with the inputs Ember and TFLM get (written as `.npy`
/// for it) and compares its outputs with TFLM's.
fn start_iree(
    iree: &Iree,
    path: &Path,
    name: &str,
    inputs: &[(Vec<usize>, DType, Vec<u8>)],
    tflm_outputs: &Value,
    plan: &Plan,
) -> Result<IreeSide, String> {
    let (python, vmfb) = iree.module(path)?;
    let dir = json_path().with_file_name("iree-inputs").join(flat(name));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut args: Vec<std::ffi::OsString> = vec![vmfb.into()];
    for (k, (shape, dtype, bytes)) in inputs.iter().enumerate() {
        let data = Data::from_le_bytes(*dtype, bytes).ok_or("input bytes")?;
        let array = ember_npy::Array::new(shape.clone(), data).map_err(|e| e.to_string())?;
        let file = dir.join(format!("in{k}.npy"));
        ember_npy::write(&file, &array).map_err(|e| format!("{}: {e}", file.display()))?;
        args.extend(["--input".into(), file.into()]);
    }
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let log = json_path()
        .with_file_name("logs")
        .join(format!("{}.iree_bench.log", flat(name)));
    let (peer, header) = Peer::start(python, "iree_bench.py", &args, plan, log)?;
    let outputs = match compare_outputs(&header["outputs"], tflm_outputs) {
        Ok(outputs) => outputs,
        Err(e) => {
            let _ = peer.finish();
            return Err(e);
        }
    };
    Ok(IreeSide {
        peer,
        header,
        outputs,
    })
}

/// One model, every side, every round.
fn bench_model(
    path: &Path,
    name: &str,
    python: &Path,
    iree: &Iree,
    plan: &Plan,
    with_workers: bool,
) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let graph = parse(&bytes).map_err(|e| e.to_string())?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let lowered = lower(&graph, stem).map_err(|e| e.to_string())?;
    let inputs: Vec<(Vec<usize>, DType, Vec<u8>)> = lowered
        .inputs
        .iter()
        .enumerate()
        .map(|(k, info)| {
            let dtype = dtype(info.element_type)?;
            let array = random_input(SEED, k, dtype, &info.shape, (-1.0, 1.0))
                .map_err(|e| e.to_string())?;
            Ok((info.shape.clone(), dtype, array.data().to_le_bytes()))
        })
        .collect::<Result<_, String>>()?;
    let refs: Vec<&[u8]> = inputs.iter().map(|(_, _, b)| b.as_slice()).collect();
    let mut models = vec![(1usize, LocalModel::new(&lowered, 1)?)];
    if with_workers {
        models.push((2, LocalModel::new(&lowered, 2)?));
    }
    let model_arg = path.as_os_str();
    let seed = SEED.to_string();
    let (mut tflm, header) = Peer::start(
        python,
        "tflm_bench.py",
        &[model_arg, "--seed".as_ref(), seed.as_ref()],
        plan,
        json_path()
            .with_file_name("logs")
            .join(format!("{}.tflm_bench.log", flat(name))),
    )?;
    for (workers, model) in &mut models {
        model.write_inputs(&refs)?;
        model.invoke()?;
        model.read_outputs()?;
        check_outputs(&lowered, model.outputs(), &header["outputs"])
            .map_err(|e| format!("Ember ({workers} workers) against TFLM: {e}"))?;
    }
    // IREE never fails the bench: what goes wrong on its side is recorded, loudly.
    let mut iree_error = None;
    let mut iree = match start_iree(iree, path, name, &inputs, &header["outputs"], plan) {
        Ok(side) => Some(side),
        Err(e) => {
            iree_error = Some(e);
            None
        }
    };
    let mut ember_rounds: Vec<Vec<Value>> = vec![Vec::new(); models.len()];
    let mut tflm_rounds = Vec::new();
    let mut iree_rounds = Vec::new();
    for round in 0..plan.rounds {
        // Each round starts with the next side: Ember, TFLM, IREE first in turn.
        for side in (0..3).map(|k| (k + round) % 3) {
            match side {
                0 => {
                    for ((_, model), rounds) in models.iter_mut().zip(&mut ember_rounds) {
                        let mut failed = None;
                        rounds.push(measure(plan, || {
                            if let Err(e) = model.invoke() {
                                failed.get_or_insert(e);
                            }
                        }));
                        if let Some(e) = failed {
                            return Err(e);
                        }
                    }
                }
                1 => tflm_rounds.push(tflm.time()?),
                _ => {
                    if let Some(side) = &mut iree {
                        match side.peer.time() {
                            Ok(r) => iree_rounds.push(r),
                            Err(e) => {
                                iree_error = Some(format!("round {round}: {e}"));
                                iree = None;
                            }
                        }
                    }
                }
            }
        }
    }
    tflm.finish()?;
    let mut iree_json = None;
    if let Some(side) = iree {
        match side.peer.finish() {
            Ok(()) => iree_json = Some((side.header, side.outputs)),
            Err(e) => iree_error = Some(e),
        }
    }
    for (_, model) in models {
        model.release()?;
    }
    let ember = summary(&ember_rounds[0]);
    let tflm = summary(&tflm_rounds);
    let ns = |v: &Value| v["median_ns"].as_f64().unwrap_or(f64::NAN);
    let ratio = ns(&tflm) / ns(&ember);
    let mut row = json!({
        "model": name,
        "path": path.display().to_string(),
        "model_bytes": bytes.len(),
        "ember": ember,
        "tflm": tflm,
        "tflm_over_ember": ratio,
        "iree": null,
        "iree_over_ember": null,
        "iree_error": iree_error,
        "ember_arena_bytes": lowered.arena_bytes(),
        "tflm_arena": header["arena"],
        "constant_bytes": lowered.constant_bytes,
        "tflm_loop_overhead_ns": header["loop_overhead"]["median_ns"],
        "outputs_checked": true,
        "tflm_version": header["tflite_micro"],
        "python": header["python"],
    });
    if let Some((iree_header, outputs)) = iree_json {
        let iree = summary(&iree_rounds);
        row["iree_over_ember"] = json!(ns(&iree) / ns(&row["ember"]));
        row["iree"] = iree;
        row["iree_outputs_vs_tflm"] = outputs;
        row["iree_loop_overhead_ns"] = iree_header["loop_overhead"]["median_ns"].clone();
        row["iree_version"] = iree_header["iree_runtime"].clone();
        row["iree_vmfb"] = iree_header["vmfb"].clone();
        row["iree_signature"] = iree_header["signature"].clone();
    }
    if let Some(rounds) = ember_rounds.get(1) {
        row["ember_workers2"] = summary(rounds);
    }
    Ok(row)
}

fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// What `target/iree/modules.json` says of the compiler and its flags, where there is one.
fn iree_compile_info() -> Value {
    let Some(path) = std::env::var_os("EMBER_IREE_MODULES").filter(|p| !p.is_empty()) else {
        return Value::Null;
    };
    let Ok(json) = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
    else {
        return Value::Null;
    };
    json!({
        "compiler": json["compiler"],
        "converter_flags": json["converter_flags"],
        "compile_flags": json["compile_flags"],
    })
}

fn main() -> ExitCode {
    let quick = std::env::var_os("EMBER_BENCH_QUICK").is_some_and(|v| v != "0");
    let plan = Plan::new(quick);
    let dir = models_dir();
    let mut models = Vec::new();
    find_models(&dir, &mut models);
    models.sort();
    if models.is_empty() {
        loudly(&format!(
            "SKIPPED: no .tflite under {} (set EMBER_MODELS to the reference models' folder); \
             nothing measured, no models.json written",
            dir.display()
        ));
        return ExitCode::SUCCESS;
    }
    let python = match std::env::var_os("EMBER_TFLM_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => workspace().join("target/oracle-venv/bin/python"),
    };
    if !python.is_file() {
        loudly(&format!(
            "FAILED: no Python with tflite-micro at {} — run `cargo xtask bench models` (it \
             makes target/oracle-venv) or set EMBER_TFLM_PYTHON",
            python.display()
        ));
        return ExitCode::FAILURE;
    }
    // A second device with two workers: the convolutions cut their output rows into
    // tiles that run on its pool.
    let with_workers = true;
    let workers_note = "measured: a second local device with workers = 2 (convolution \
         output rows in tiles on its pool)"
        .to_string();
    let load_before = load_average();
    let started = Instant::now();
    println!(
        "Models benchmark: {} models from {}, {} round(s) of {} batches of ~{} ms per side",
        models.len(),
        dir.display(),
        plan.rounds,
        plan.batches,
        plan.batch_ms
    );
    println!("workers 2: {workers_note}");
    let iree = Iree::from_env();
    if let Iree::Absent(why) = &iree {
        loudly(&format!("IREE NOT MEASURED on any model: {why}"));
    }
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut iree_failures = Vec::new();
    for path in &models {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .with_extension("")
            .display()
            .to_string();
        eprint!("  {name} … ");
        match bench_model(path, &name, &python, &iree, &plan, with_workers) {
            Ok(row) => {
                match row["iree_error"].as_str() {
                    None => eprintln!("ok"),
                    Some(e) => {
                        eprintln!("ok, but IREE NOT MEASURED");
                        if matches!(iree, Iree::Ready { .. }) {
                            loudly(&format!("IREE NOT MEASURED for {name}: {e}"));
                        }
                        iree_failures.push(format!("{name}: {e}"));
                    }
                }
                rows.push(row);
            }
            Err(e) => {
                eprintln!("FAILED");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    let us = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1e3;
    let range = |s: &Value| {
        format!(
            "{:.1}–{:.1}",
            us(&s["round_median_min_ns"]),
            us(&s["round_median_max_ns"])
        )
    };
    let times = |s: &Value| {
        if s.is_null() {
            format!("{:>10} {:>17}", "—", "")
        } else {
            format!("{:>10.1} {:>17}", us(&s["median_ns"]), range(s))
        }
    };
    let ratio = |v: &Value| {
        v.as_f64()
            .map_or_else(|| "—".to_string(), |r| format!("{r:.2}×"))
    };
    println!(
        "\n{:<34} {:>10} {:>17} {:>10} {:>17} {:>10} {:>17} {:>9} {:>9} {:>14}",
        "model",
        "Ember µs",
        "(rounds)",
        "TFLM µs",
        "(rounds)",
        "IREE µs",
        "(rounds)",
        "TFLM/Emb",
        "IREE/Emb",
        "IREE−TFLM Δ"
    );
    for r in &rows {
        let diff = &r["iree_outputs_vs_tflm"];
        println!(
            "{:<34} {} {} {} {:>9} {:>9} {:>14}",
            r["model"].as_str().unwrap_or("?"),
            times(&r["ember"]),
            times(&r["tflm"]),
            times(&r["iree"]),
            ratio(&r["tflm_over_ember"]),
            ratio(&r["iree_over_ember"]),
            diff["max_abs_diff"].as_f64().map_or_else(
                || "—".to_string(),
                |d| match d {
                    0.0 => "0".to_string(),
                    d if d >= 1.0 => format!("{d:.0} ({}/{})", diff["differing"], diff["values"]),
                    d => format!("{d:.1e}"),
                }
            ),
        );
        if let Some(w) = r.get("ember_workers2") {
            println!("{:<34} {}", "  … Ember, workers 2", times(w));
        }
    }
    println!(
        "\n{:<34} {:>8} {:>24} {:>9}",
        "model", "arena B", "TFLM arena B", "consts B"
    );
    for r in &rows {
        println!(
            "{:<34} {:>8} {:>24} {:>9}",
            r["model"].as_str().unwrap_or("?"),
            r["ember_arena_bytes"].to_string(),
            format!(
                "{} ({} + {})",
                r["tflm_arena"]["total"], r["tflm_arena"]["head"], r["tflm_arena"]["tail"]
            ),
            r["constant_bytes"].to_string(),
        );
    }
    let overhead = |key: &str| {
        rows.iter()
            .find_map(|r| r[key].as_f64())
            .unwrap_or(f64::NAN)
    };
    println!(
        "\nEmber: Session::invoke alone, 1 worker. TFLM: interp.invoke() alone in Python (its \
         timing loop alone costs ~{:.0} ns a call). IREE: `main` alone on the local-sync \
         device, through iree.runtime's VmContext.invoke in Python (loop ~{:.0} ns a call). \
         Medians of all batches; (rounds) is the range of the round medians. IREE−TFLM Δ: \
         the largest |difference| between IREE's outputs and TFLM's (for integers, \
         how many of the values differ). TFLM arena: total \
         (head = activations + tail = persistent).",
        overhead("tflm_loop_overhead_ns"),
        overhead("iree_loop_overhead_ns"),
    );
    let json = json!({
        "format": "ember-bench-models/2",
        "quick": quick,
        "machine": {
            "cpu": cpu(),
            "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
            "load_average_before": load_before,
            "load_average_after": load_average(),
        },
        "seconds": started.elapsed().as_secs_f64(),
        "plan": {
            "seed": SEED,
            "rounds": plan.rounds,
            "batches": plan.batches,
            "batch_ms": plan.batch_ms,
            "warmup_ms": plan.warmup_ms,
        },
        "timed": {
            "ember": "Session::invoke alone (LocalModel::invoke: queue_alloca of the arena, \
                      memoized replay, queue_dealloca, wait) on inputs written once; release \
                      build, 1 worker",
            "tflm": "interp.invoke() alone in Python (tflite-micro's pybind interpreter, \
                     reference kernels) on inputs set once; time.perf_counter_ns",
            "iree": "the compiled module's `main` alone (xtask/oracle/iree_bench.py: \
                     iree.runtime VmContext.invoke, argument list of device buffers built once, \
                     a new result list each call) on IREE's local-sync device (one thread); \
                     TFLite pinned to batch 1, tosa-converter-for-tflite to TOSA, iree-compile \
                     for llvm-cpu on the host CPU; time.perf_counter_ns",
            "method": "warm-up (>= 3 calls and warmup_ms), then `batches` batches of N calls \
                       (N from the warm-up so a batch takes ~batch_ms); a figure is a batch's \
                       time / N; per side, the median of all figures over the rounds; each \
                       round starts with the next side (Ember, TFLM, IREE first in turn)",
        },
        "iree_compile": iree_compile_info(),
        "workers2": workers_note,
        "models": rows,
        "failures": failures,
        "iree_not_measured": iree_failures,
    });
    let path = json_path();
    let written = std::fs::create_dir_all(path.parent().expect("dir")).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&json).expect("json") + "\n",
        )
    });
    match written {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => {
            eprintln!("bench models: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if !iree_failures.is_empty() {
        loudly(&format!(
            "IREE NOT MEASURED (the other figures are): {}",
            iree_failures.join("\n!!! ")
        ));
    }
    if !failures.is_empty() {
        loudly(&format!("FAILED: {}", failures.join("\n!!! ")));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
