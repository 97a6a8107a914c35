//! Models benchmark: time per inference of each reference model on the host's local device
//! (Ember), against TensorFlow Lite Micro's interpreter timed on the same machine in the
//! same run.
//!
//! `cargo xtask bench models` (which makes the oracle's venv and says SKIPPED, loudly, when
//! the models are absent), or `cargo bench -p ember-import --bench models` with
//! `EMBER_TFLM_PYTHON` naming a Python that has the `tflite-micro` package (default:
//! `target/oracle-venv/bin/python`) and the models at `$EMBER_MODELS` (default:
//! `../shared/models`); `EMBER_BENCH_QUICK=1` for a tiny run. Prints a table and writes
//! `target/bench/models.json`.
//!
//! For every `.tflite` under the models folder, both sides get the oracle's seeded random
//! inputs (seed 0: `ember_npy::oracle::random_input`, `tflm_oracle.py`'s generator), written
//! once; their outputs are checked against each other before anything is timed (integers
//! equal, floats within 1e-5 relative). Then, in `ROUNDS` rounds that alternate which side
//! goes first, each side measures one thing, the same way:
//! - Ember: `Session::invoke` alone ([`LocalModel::invoke`]: the arena's `queue_alloca`, the
//!   memoized command buffer's replay, `queue_dealloca`, the wait), one worker;
//! - TFLM: `interp.invoke()` alone in Python (`xtask/oracle/tflm_bench.py`, one process per
//!   model kept for all its rounds), TFLM's reference kernels;
//!
//! a warm-up of at least 3 calls and `WARMUP_MS`, then `BATCHES` batches of N back-to-back
//! calls (N such that a batch takes about `BATCH_MS`), each batch's time over N one figure.
//! A side's time per inference is the median of all its figures over the rounds; the round
//! medians give the spread.

use ember_import::{lower, parse, ElementType, LocalModel, Lowered};
use ember_npy::oracle::random_input;
use ember_npy::{DType, Data};
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

/// TFLM's side of one model: `tflm_bench.py`, kept running for the model's rounds.
struct Tflm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Tflm {
    /// Starts the script on `model`; returns it and its header line.
    fn start(python: &Path, model: &Path, plan: &Plan) -> Result<(Self, Value), String> {
        let script = workspace().join("xtask/oracle/tflm_bench.py");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(model)
            .args(["--seed", &SEED.to_string()])
            .args(["--batches", &plan.batches.to_string()])
            .args(["--batch-ms", &plan.batch_ms.to_string()])
            .args(["--warmup-ms", &plan.warmup_ms.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let stdin = child.stdin.take().ok_or("the script's stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("the script's stdout")?);
        let mut tflm = Tflm {
            child,
            stdin,
            stdout,
        };
        let header = tflm.line()?;
        Ok((tflm, header))
    }

    fn line(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| format!("reading tflm_bench.py: {e}"))?;
        if line.is_empty() {
            return Err("tflm_bench.py stopped (its error is above)".into());
        }
        serde_json::from_str(&line).map_err(|e| format!("tflm_bench.py's answer: {e}"))
    }

    fn time(&mut self) -> Result<Value, String> {
        writeln!(self.stdin, "time").map_err(|e| format!("tflm_bench.py: {e}"))?;
        self.stdin
            .flush()
            .map_err(|e| format!("tflm_bench.py: {e}"))?;
        self.line()
    }

    fn finish(mut self) -> Result<(), String> {
        let _ = writeln!(self.stdin, "quit");
        drop(self.stdin);
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("tflm_bench.py exited with {status}"))
        }
    }
}

/// Whether any kernel of the TFLite set can spread its workgroups over the worker pool;
/// [`hal_local::kernel::Entry::Exclusive`] kernels run every workgroup inline.
fn workers_matter() -> bool {
    hal_local::kernels::TFLITE
        .iter()
        .any(|k| matches!(k.entry, hal_local::kernel::Entry::Shared(_)))
}

/// One model, both sides, every round.
fn bench_model(
    path: &Path,
    name: &str,
    python: &Path,
    plan: &Plan,
    with_workers: bool,
) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let graph = parse(&bytes).map_err(|e| e.to_string())?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let lowered = lower(&graph, stem).map_err(|e| e.to_string())?;
    let inputs: Vec<Vec<u8>> = lowered
        .inputs
        .iter()
        .enumerate()
        .map(|(k, info)| {
            let array = random_input(SEED, k, dtype(info.element_type)?, &info.shape, (-1.0, 1.0))
                .map_err(|e| e.to_string())?;
            Ok(array.data().to_le_bytes())
        })
        .collect::<Result<_, String>>()?;
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let mut models = vec![(1usize, LocalModel::new(&lowered, 1)?)];
    if with_workers {
        models.push((2, LocalModel::new(&lowered, 2)?));
    }
    let (mut tflm, header) = Tflm::start(python, path, plan)?;
    for (workers, model) in &mut models {
        model.write_inputs(&refs)?;
        model.invoke()?;
        model.read_outputs()?;
        check_outputs(&lowered, model.outputs(), &header["outputs"])
            .map_err(|e| format!("Ember ({workers} workers) against TFLM: {e}"))?;
    }
    let mut ember_rounds: Vec<Vec<Value>> = vec![Vec::new(); models.len()];
    let mut tflm_rounds = Vec::new();
    for round in 0..plan.rounds {
        if round % 2 == 1 {
            tflm_rounds.push(tflm.time()?);
        }
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
        if round % 2 == 0 {
            tflm_rounds.push(tflm.time()?);
        }
    }
    tflm.finish()?;
    for (_, model) in models {
        model.release()?;
    }
    let ember = summary(&ember_rounds[0]);
    let tflm = summary(&tflm_rounds);
    let ratio = tflm["median_ns"].as_f64().unwrap_or(f64::NAN)
        / ember["median_ns"].as_f64().unwrap_or(f64::NAN);
    let mut row = json!({
        "model": name,
        "path": path.display().to_string(),
        "model_bytes": bytes.len(),
        "ember": ember,
        "tflm": tflm,
        "tflm_over_ember": ratio,
        "ember_arena_bytes": lowered.arena_bytes(),
        "tflm_arena": header["arena"],
        "constant_bytes": lowered.constant_bytes,
        "tflm_loop_overhead_ns": header["loop_overhead"]["median_ns"],
        "outputs_checked": true,
        "tflm_version": header["tflite_micro"],
        "python": header["python"],
    });
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
    let with_workers = workers_matter();
    let workers_note = if with_workers {
        "measured: a second local device with workers = 2".to_string()
    } else {
        "not measured: every kernel of hal_local::kernels::TFLITE is Entry::Exclusive, whose \
         workgroups run inline on the calling thread whatever `workers` says"
            .to_string()
    };
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
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for path in &models {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .with_extension("")
            .display()
            .to_string();
        eprint!("  {name} … ");
        match bench_model(path, &name, &python, &plan, with_workers) {
            Ok(row) => {
                eprintln!("ok");
                rows.push(row);
            }
            Err(e) => {
                eprintln!("FAILED");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    let us = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1e3;
    println!(
        "\n{:<34} {:>10} {:>17} {:>10} {:>17} {:>9} {:>8} {:>20} {:>9}",
        "model",
        "Ember µs",
        "(rounds)",
        "TFLM µs",
        "(rounds)",
        "TFLM/Emb",
        "arena B",
        "TFLM arena B",
        "consts B"
    );
    for r in &rows {
        let range = |s: &Value| {
            format!(
                "{:.1}–{:.1}",
                us(&s["round_median_min_ns"]),
                us(&s["round_median_max_ns"])
            )
        };
        println!(
            "{:<34} {:>10.1} {:>17} {:>10.1} {:>17} {:>8.2}× {:>8} {:>20} {:>9}",
            r["model"].as_str().unwrap_or("?"),
            us(&r["ember"]["median_ns"]),
            range(&r["ember"]),
            us(&r["tflm"]["median_ns"]),
            range(&r["tflm"]),
            r["tflm_over_ember"].as_f64().unwrap_or(f64::NAN),
            r["ember_arena_bytes"].to_string(),
            format!(
                "{} ({} + {})",
                r["tflm_arena"]["total"], r["tflm_arena"]["head"], r["tflm_arena"]["tail"]
            ),
            r["constant_bytes"].to_string(),
        );
        if let Some(w) = r.get("ember_workers2") {
            println!(
                "{:<34} {:>10.1} {:>17}",
                "  … Ember, workers 2",
                us(&w["median_ns"]),
                range(w)
            );
        }
    }
    println!(
        "\nEmber: Session::invoke alone, 1 worker. TFLM: interp.invoke() alone in Python \
         (its timing loop alone costs ~{:.0} ns a call). Medians of all batches; (rounds) is \
         the range of the round medians. TFLM arena: total (head = activations + tail = \
         persistent).",
        rows.first().map_or(f64::NAN, |r| r["tflm_loop_overhead_ns"]
            .as_f64()
            .unwrap_or(f64::NAN))
    );
    let json = json!({
        "format": "ember-bench-models/1",
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
            "method": "warm-up (>= 3 calls and warmup_ms), then `batches` batches of N calls \
                       (N from the warm-up so a batch takes ~batch_ms); a figure is a batch's \
                       time / N; per side, the median of all figures over the rounds; rounds \
                       alternate which side goes first",
        },
        "workers2": workers_note,
        "models": rows,
        "failures": failures,
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
    if !failures.is_empty() {
        loudly(&format!("FAILED: {}", failures.join("\n!!! ")));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
