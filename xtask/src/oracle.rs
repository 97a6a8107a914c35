//! `cargo xtask oracle`: TensorFlow Lite Micro's own interpreter (the `tflite-micro` PyPI
//! package, its reference kernels) computes a `.tflite` model's outputs, the expected values
//! Ember is held to bit for bit.
//!
//! The ops TFLM does not have (RELU_N1_TO_1, RELU_0_TO_1, GELU) take TensorFlow Lite's own
//! interpreter (the `ai-edge-litert` package) with its reference kernels instead
//! (`OpResolverType.BUILTIN_REF`): the per-op generator picks it for them, and each manifest
//! names the interpreter that computed it.
//!
//! The packages, pinned exactly in `xtask/oracle/requirements.txt`, go into a venv at
//! `target/oracle-venv` (the workspace's own `target/`, whatever `CARGO_TARGET_DIR` says),
//! made once and then reused while its stamp matches the requirements. The script
//! `xtask/oracle/tflm_oracle.py` writes each case's inputs and outputs as `.npy` files and a
//! `manifest.json`; this module then reads them back with `ember-npy` and checks them
//! (types and shapes, numpy's exact bytes, the random inputs reproduced in Rust, and
//! person_detect's verdict on its two BMPs).

use crate::setup;
use crate::step::{cmd, output, root, run, Result};
use ember_npy::oracle::{random_input, Manifest};
use std::path::{Path, PathBuf};

/// The pinned requirements, relative to the workspace root.
const REQUIREMENTS: &str = "xtask/oracle/requirements.txt";
/// The oracle script, relative to the workspace root.
const SCRIPT: &str = "xtask/oracle/tflm_oracle.py";
/// The stamp in the venv: the requirements it was made from.
const STAMP: &str = "ember-requirements.txt";

/// The venv's folder: `target/oracle-venv` at the workspace root.
pub fn venv_dir() -> PathBuf {
    root().join("target").join("oracle-venv")
}

pub fn str_of(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))
}

/// Makes sure the venv exists with exactly the pinned packages; returns its Python. Fast
/// when its stamp matches the requirements and its Python runs.
pub fn venv() -> Result<PathBuf> {
    pinned_venv(&Venv {
        what: "the TFLM oracle's venv",
        dir: venv_dir(),
        requirements: REQUIREMENTS,
        complete: true,
        check: "from tflite_micro.python.tflite_micro import runtime; \
                from ai_edge_litert.interpreter import Interpreter, OpResolverType",
    })
}

/// A venv of exactly pinned packages, made from [`setup::python_for_venv`].
pub struct Venv {
    /// What it is, for the steps' titles.
    pub what: &'static str,
    /// Its folder.
    pub dir: PathBuf,
    /// The pinned requirements, relative to the workspace root, installed with `--no-deps`.
    pub requirements: &'static str,
    /// Whether the requirements are the whole resolved set (then `pip check` must pass).
    pub complete: bool,
    /// Python that must run in it once installed (imports, typically).
    pub check: &'static str,
}

/// Makes sure `venv` exists with exactly its pinned packages; returns its Python. Fast when
/// its stamp (the requirements it was made from) matches and its Python runs.
pub fn pinned_venv(venv: &Venv) -> Result<PathBuf> {
    let python = venv.dir.join("bin").join("python");
    let requirements = std::fs::read_to_string(root().join(venv.requirements))
        .map_err(|e| format!("{}: {e}", venv.requirements))?;
    let stamp = venv.dir.join(STAMP);
    let stamped = std::fs::read_to_string(&stamp).is_ok_and(|s| s == requirements);
    if stamped && output(cmd(str_of(&python)?, &["--version"])).is_some() {
        return Ok(python);
    }
    let base = setup::python_for_venv()?;
    let dir_arg = str_of(&venv.dir)?;
    run(
        &format!("create {}", venv.what),
        cmd(&base, &["-m", "venv", "--clear", dir_arg]),
    )?;
    let python_arg = str_of(&python)?;
    run(
        &format!(
            "install the pinned packages of {} ({})",
            venv.what, venv.requirements
        ),
        cmd(
            python_arg,
            &[
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--no-deps",
                "-r",
                venv.requirements,
            ],
        ),
    )?;
    if venv.complete {
        run(
            &format!("check the packages of {} are complete", venv.what),
            cmd(
                python_arg,
                &["-m", "pip", "check", "--disable-pip-version-check"],
            ),
        )?;
    }
    run(
        &format!("check {} works", venv.what),
        cmd(python_arg, &["-c", venv.check]),
    )?;
    std::fs::write(&stamp, requirements).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(python)
}

/// Where the models are: `$EMBER_MODELS`, else `../shared/models` beside the workspace.
pub fn models_dir() -> PathBuf {
    match std::env::var_os("EMBER_MODELS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => root().join("..").join("shared").join("models"),
    }
}

/// A path given on the command line, made absolute against the directory xtask was run in
/// (the script runs at the workspace root).
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// An existing file given on the command line, as its canonical absolute path.
fn existing(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// What one oracle run is asked for.
pub struct Request<'a> {
    /// The `.tflite` model.
    pub model: &'a Path,
    /// Seeds 0..seeds, after the all-zero case.
    pub seeds: u32,
    /// The output folder (default: `target/oracle/<model stem>`).
    pub output: Option<&'a Path>,
    /// 8-bit BMPs, one case each.
    pub bmp: &'a [PathBuf],
    /// `.npy` files, one per model input: one case.
    pub inputs: &'a [PathBuf],
}

/// `cargo xtask oracle MODEL`: the venv, the script, then the checks of what it wrote.
pub fn oracle(request: &Request<'_>) -> Result {
    let python = venv()?;
    let dir = run_script(&python, request)?;
    let summary = check(&dir)?;
    println!("\n{summary}");
    Ok(())
}

fn run_script(python: &Path, r: &Request<'_>) -> Result<PathBuf> {
    let model = existing(r.model)?;
    let out = match r.output {
        Some(o) => absolute(o)?,
        None => {
            let stem = model.file_stem().unwrap_or_default();
            root().join("target").join("oracle").join(stem)
        }
    };
    let mut args: Vec<String> = vec![
        SCRIPT.into(),
        str_of(&model)?.into(),
        "-o".into(),
        str_of(&out)?.into(),
    ];
    if r.seeds > 0 {
        args.push("--seeds".into());
        args.extend((0..r.seeds).map(|s| s.to_string()));
    }
    for bmp in r.bmp {
        args.extend(["--bmp".into(), str_of(&existing(bmp)?)?.into()]);
    }
    if !r.inputs.is_empty() {
        args.push("--inputs".into());
        for input in r.inputs {
            args.push(str_of(&existing(input)?)?.into());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let name = model.file_name().unwrap_or_default().to_string_lossy();
    run(
        &format!("TFLM's interpreter on {name}"),
        cmd(str_of(python)?, &args),
    )?;
    Ok(out)
}

/// Reads an oracle run back and checks it: every file's type and shape against the model's
/// tensors, every file byte-identical to what `ember-npy` writes for its array, the random
/// inputs equal to `ember_npy::oracle::random_input`'s, the zeros zero, and for
/// person_detect with its BMPs, person.bmp scored "person" and no_person.bmp not. Returns a
/// summary line.
fn check(dir: &Path) -> Result<String> {
    let m = Manifest::load(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let npy_err = |e: ember_npy::Error| format!("{}: {e}", dir.display());
    let mut files = 0;
    for case in &m.cases {
        let inputs = m.read_inputs(case).map_err(npy_err)?;
        let outputs = m.read_outputs(case).map_err(npy_err)?;
        for (file, array) in case
            .inputs
            .iter()
            .zip(&inputs)
            .chain(case.outputs.iter().zip(&outputs))
        {
            let bytes = std::fs::read(m.dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
            if array.to_npy() != bytes {
                return Err(format!(
                    "{file}: ember-npy does not write the bytes numpy wrote"
                ));
            }
            files += 1;
        }
        for (tensor, input) in m.inputs.iter().zip(&inputs) {
            match (case.kind.as_str(), case.seed) {
                ("random", Some(seed)) => {
                    let want = random_input(
                        seed,
                        tensor.index,
                        tensor.dtype,
                        &tensor.shape,
                        m.float_range,
                    )
                    .map_err(npy_err)?;
                    if want.data().to_le_bytes() != input.data().to_le_bytes() {
                        return Err(format!(
                            "{}: input {} of case {} is not what ember_npy::oracle::random_input draws",
                            dir.display(),
                            tensor.index,
                            case.name
                        ));
                    }
                }
                ("zeros", _) if input.data().to_le_bytes().iter().any(|&b| b != 0) => {
                    return Err(format!(
                        "{}: case zeros has a non-zero input",
                        dir.display()
                    ));
                }
                _ => {}
            }
        }
    }
    let verdict = person_verdict(&m)?;
    let tensors = |list: &[ember_npy::oracle::Tensor]| {
        list.iter()
            .map(|t| format!("{} {:?}", t.dtype, t.shape))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let arena = |x: Option<u64>| x.map_or("?".to_string(), |x| x.to_string());
    Ok(format!(
        "{}: in {}, out {}; arena {} B = {} head + {} tail; {} cases, {files} files checked{verdict}",
        m.model.file_name().unwrap_or_default().to_string_lossy(),
        tensors(&m.inputs),
        tensors(&m.outputs),
        arena(m.arena.total),
        arena(m.arena.head),
        arena(m.arena.tail),
        m.cases.len(),
    ))
}

/// person_detect on its BMPs: output element 1 is "person", element 0 "no person".
fn person_verdict(m: &Manifest) -> Result<String> {
    let is_person_detect = m
        .model
        .file_name()
        .is_some_and(|n| n == "person_detect.tflite");
    let (Some(person), Some(no_person)) = (m.case("bmp-person"), m.case("bmp-no_person")) else {
        return Ok(String::new());
    };
    if !is_person_detect {
        return Ok(String::new());
    }
    let scores = |case| -> Result<(i8, i8)> {
        let out = m.read_outputs(case).map_err(|e| e.to_string())?;
        match out.first().and_then(|a| a.as_i8()) {
            Some(&[no, yes]) => Ok((no, yes)),
            _ => Err("person_detect: its output is not two int8 scores".into()),
        }
    };
    let (p_no, p_yes) = scores(person)?;
    let (n_no, n_yes) = scores(no_person)?;
    let q = &m.outputs[0];
    let real = |x: i8| match (q.scale.first(), q.zero_point.first()) {
        (Some(&s), Some(&z)) => format!("{:.3}", (i64::from(x) - z) as f32 * s),
        _ => "?".into(),
    };
    let line = format!(
        "\n  person.bmp: person {p_yes} ({}), no person {p_no} ({}); \
         no_person.bmp: person {n_yes} ({}), no person {n_no} ({})",
        real(p_yes),
        real(p_no),
        real(n_yes),
        real(n_no)
    );
    if p_yes <= p_no || n_yes >= n_no {
        return Err(format!("person_detect got its BMPs wrong:{line}"));
    }
    Ok(line)
}

/// `cargo xtask oracle --all`: every `.tflite` under the models folder through the oracle,
/// each checked; person_detect on its two BMPs too. Says SKIPPED, loudly, when the models
/// (or the BMPs) are absent.
pub fn all(seeds: u32) -> Result {
    let dir = models_dir();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut models = Vec::new();
    if dir.is_dir() {
        find_models(&dir, &mut models)?;
    }
    models.sort();
    if models.is_empty() {
        skipped(&format!(
            "the TFLM oracle on the reference models: no .tflite under {} \
             (set EMBER_MODELS to their folder)",
            dir.display()
        ));
        return Ok(());
    }
    let python = venv()?;
    let mut summaries = Vec::new();
    for model in &models {
        let stem = model.file_stem().unwrap_or_default();
        let twins = models
            .iter()
            .filter(|m| m.file_stem() == Some(stem))
            .count();
        let out_name = if twins > 1 {
            let parent = model.parent().and_then(Path::file_name).unwrap_or_default();
            format!("{}-{}", parent.to_string_lossy(), stem.to_string_lossy())
        } else {
            stem.to_string_lossy().into_owned()
        };
        let out = root().join("target").join("oracle").join(out_name);
        let bmp = bmps_of(model);
        let request = Request {
            model,
            seeds,
            output: Some(&out),
            bmp: &bmp,
            inputs: &[],
        };
        let dir = run_script(&python, &request)?;
        summaries.push(check(&dir)?);
    }
    println!(
        "\noracle: {} models from {}, every file checked:",
        models.len(),
        dir.display()
    );
    for s in &summaries {
        println!("  {s}");
    }
    Ok(())
}

/// person_detect's two BMPs beside `model` (in `testdata/`) where `model` is person_detect
/// and they exist (said loudly where they do not); none for any other model.
fn bmps_of(model: &Path) -> Vec<PathBuf> {
    if model
        .file_name()
        .is_none_or(|n| n != "person_detect.tflite")
    {
        return Vec::new();
    }
    let testdata = model.with_file_name("testdata");
    let files = ["person.bmp", "no_person.bmp"].map(|f| testdata.join(f));
    if files.iter().all(|f| f.is_file()) {
        return files.into();
    }
    skipped(&format!(
        "person_detect on its BMPs: no {} and {}",
        files[0].display(),
        files[1].display()
    ));
    Vec::new()
}

/// The oracle's cases for one model (the zeros, 3 seeds, person_detect's BMPs) in
/// `target/oracle/<stem>/`: reused where a run of this very model file is there, else made
/// and checked. Returns the folder.
pub fn cases_for(model: &Path) -> Result<PathBuf> {
    let model = existing(model)?;
    let stem = model.file_stem().unwrap_or_default();
    let out = root().join("target").join("oracle").join(stem);
    if let Ok(m) = Manifest::load(&out) {
        let same = std::fs::canonicalize(&m.model).is_ok_and(|p| p == model);
        if same && m.cases.len() >= 4 {
            return Ok(out);
        }
    }
    let python = venv()?;
    let bmp = bmps_of(&model);
    let request = Request {
        model: &model,
        seeds: 3,
        output: Some(&out),
        bmp: &bmp,
        inputs: &[],
    };
    let dir = run_script(&python, &request)?;
    println!("    {}", check(&dir)?);
    Ok(dir)
}

/// The per-op model generator, relative to the workspace root.
const OPS_SCRIPT: &str = "xtask/oracle/single_op_models.py";

/// `cargo xtask oracle --ops`: `count` randomized single-op models per op variant (seeded
/// by `seed`), each run through TFLM, into `target/oracle-ops/<variant>/<n>/` (the folder
/// is replaced), with `summary.json` counting the models TFLM refused (drawn again).
pub fn ops(count: u32, seed: u64) -> Result {
    let python = venv()?;
    let out = root().join("target").join("oracle-ops");
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (count, seed, jobs) = (count.to_string(), seed.to_string(), jobs.to_string());
    let start = std::time::Instant::now();
    run(
        &format!("TFLM on {count} random single-op models per op variant"),
        cmd(
            str_of(&python)?,
            &[
                OPS_SCRIPT,
                "-o",
                str_of(&out)?,
                "--count",
                &count,
                "--seed",
                &seed,
                "--jobs",
                &jobs,
            ],
        ),
    )?;
    let summary = out.join("summary.json");
    if !summary.is_file() {
        return Err(format!("{}: not written", summary.display()));
    }
    println!(
        "oracle --ops: {} in {:.1} s",
        out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The large-model generator, relative to the workspace root.
const LARGE_SCRIPT: &str = "xtask/oracle/large_models.py";

/// The models it writes, each into `target/oracle-large/<name>/`: one of more than 200
/// transients, one of more than 5 MB of constants.
pub const LARGE_MODELS: [&str; 2] = ["deep_int8", "large_int8"];

/// Where `cargo xtask oracle --large` writes: `target/oracle-large` at the workspace root.
pub fn large_dir() -> PathBuf {
    root().join("target").join("oracle-large")
}

/// `cargo xtask oracle --large`: [`LARGE_MODELS`] built by `xtask/oracle/large_models.py`
/// (deterministic) and run through TFLM into `target/oracle-large/<name>/` (each folder
/// replaced), every case's files then read back and checked as any oracle run's are.
pub fn large() -> Result {
    let python = venv()?;
    let out = large_dir();
    let start = std::time::Instant::now();
    let mut args = vec![LARGE_SCRIPT, "-o", str_of(&out)?, "--only"];
    args.extend(LARGE_MODELS);
    run(
        "TFLM on the large models (deep_int8: 110 residual blocks; large_int8: 6.3 MB of weights)",
        cmd(str_of(&python)?, &args),
    )?;
    let mut summaries = Vec::new();
    for name in LARGE_MODELS {
        summaries.push(format!("{name}: {}", check(&out.join(name))?));
    }
    println!(
        "\noracle --large: {} in {:.1} s, every file checked:",
        out.display(),
        start.elapsed().as_secs_f64()
    );
    for s in &summaries {
        println!("  {s}");
    }
    Ok(())
}

pub fn find_models(dir: &Path, found: &mut Vec<PathBuf>) -> Result {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            find_models(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "tflite") {
            found.push(path);
        }
    }
    Ok(())
}

pub fn skipped(what: &str) {
    let bar = "!".repeat(78);
    println!("\n{bar}\n!!! SKIPPED: {what}\n{bar}");
    eprintln!("xtask: SKIPPED: {what}");
}
