//! IREE's CPU runtime, the models benchmark's third engine: its venv, and each reference
//! model compiled to a `.vmfb` for the bench to time (`xtask/oracle/iree_bench.py`).
//!
//! The packages, pinned exactly in `xtask/oracle/iree-requirements.txt` (IREE 3.13's
//! `iree-base-compiler` and `iree-base-runtime`, and `tosa-converter-for-tflite` as the TFLite
//! importer), go into a venv at `target/iree-venv`, made once and reused while its stamp
//! matches. Each model then goes, in `target/iree/<stem>-<key>/` (`key`: a hash of the model's
//! bytes, the requirements, the flags and the host CPU, so a folder is reused until one of
//! them changes):
//!
//! 1. `model.tflite`: the model with every `-1` in a tensor's `shape_signature` (the dynamic
//!    batch) pinned to 1, in place. Without it `iree-compile` fails on the int8 models with
//!    softmax (kws_ref_model, pretrainedResnet_quant: "exceeded stack allocation limit").
//! 2. `model.mlirbc`: TOSA, from `tosa-converter-for-tflite --bytecode` (its textual MLIR
//!    does not parse in IREE 3.13).
//! 3. `model.vmfb`: `iree-compile` for `llvm-cpu` on the host CPU ([`COMPILE_FLAGS`]).
//!
//! Each tool's output goes to a `.log` beside its file. A model that fails a step is named,
//! loudly, with the end of that log, and the bench times the others; so is a venv that cannot
//! be made (then the bench times Ember and TFLM alone). `target/iree/modules.json` tells the
//! bench which `.vmfb` belongs to which model.

use crate::oracle::{pinned_venv, str_of, Venv};
use crate::step::{root, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The pinned requirements, relative to the workspace root.
const REQUIREMENTS: &str = "xtask/oracle/iree-requirements.txt";

/// `iree-compile`'s flags after the input: TOSA in, the local device's `llvm-cpu` backend,
/// code for the host CPU.
pub const COMPILE_FLAGS: &[&str] = &[
    "--iree-input-type=tosa",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
];

/// The venv's folder: `target/iree-venv` at the workspace root.
pub fn venv_dir() -> PathBuf {
    root().join("target").join("iree-venv")
}

/// Makes sure IREE's venv exists; returns its Python. Prints its size when it was just made.
pub fn venv() -> Result<PathBuf> {
    let dir = venv_dir();
    let fresh = !dir.join("bin").join("python").is_file();
    let started = Instant::now();
    let python = pinned_venv(&Venv {
        what: "IREE's venv",
        dir: dir.clone(),
        requirements: REQUIREMENTS,
        complete: false,
        check: "import iree.runtime, iree.compiler, tosa_converter_for_tflite",
    })?;
    if fresh {
        println!(
            "    IREE's venv: {:.0} MB in {}, made in {:.1} s",
            bytes_under(&dir) as f64 / 1e6,
            dir.display(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(python)
}

/// The bytes of every file under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// Every model compiled (or found compiled) for IREE; writes and returns the path of
/// `target/iree/modules.json`: per model its `.vmfb`, or why there is none.
pub fn compile_all(python: &Path, models: &[PathBuf]) -> Result<PathBuf> {
    let bin = python.parent().unwrap_or(Path::new("."));
    let requirements = std::fs::read_to_string(root().join(REQUIREMENTS))
        .map_err(|e| format!("{REQUIREMENTS}: {e}"))?;
    let work = root().join("target").join("iree");
    let compiler = tool_version(&bin.join("iree-compile"));
    let mut entries = Vec::new();
    let mut failed = Vec::new();
    println!(
        "\n==> IREE: compile {} models for llvm-cpu on the host CPU ({})",
        models.len(),
        work.display()
    );
    for model in models {
        let started = Instant::now();
        let entry = match compile(bin, &work, model, &requirements) {
            Ok((vmfb, cached, pinned)) => {
                println!(
                    "    {}: {}{} ({:.1} s)",
                    model.display(),
                    vmfb.display(),
                    if cached { ", cached" } else { "" },
                    started.elapsed().as_secs_f64()
                );
                json!({
                    "model": model.display().to_string(),
                    "vmfb": vmfb.display().to_string(),
                    "cached": cached,
                    "pinned_dims": pinned,
                    "seconds": started.elapsed().as_secs_f64(),
                })
            }
            Err(e) => {
                failed.push(format!("{}: {e}", model.display()));
                json!({ "model": model.display().to_string(), "error": e })
            }
        };
        entries.push(entry);
    }
    for f in &failed {
        loudly(&format!("IREE NOT MEASURED for {f}"));
    }
    let manifest = json!({
        "format": "ember-iree-modules/1",
        "compiler": compiler,
        "requirements": REQUIREMENTS,
        "converter_flags": ["--bytecode"],
        "compile_flags": COMPILE_FLAGS,
        "models": entries,
    });
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let path = work.join("modules.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&manifest).expect("json") + "\n",
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// One model: pin, convert, compile, in its cache folder; returns the `.vmfb`, whether it
/// was already there, and how many dimensions were pinned.
fn compile(
    bin: &Path,
    work: &Path,
    model: &Path,
    requirements: &str,
) -> Result<(PathBuf, bool, usize)> {
    let mut bytes = std::fs::read(model).map_err(|e| e.to_string())?;
    let mut key = Fnv::default();
    key.write(&bytes);
    key.write(requirements.as_bytes());
    key.write(COMPILE_FLAGS.join(" ").as_bytes());
    key.write(host_cpu().as_bytes());
    let stem = model.file_stem().unwrap_or_default().to_string_lossy();
    let dir = work.join(format!("{stem}-{:016x}", key.0));
    let vmfb = dir.join("model.vmfb");
    let pinned = pin_dynamic_batch(&mut bytes)?;
    if vmfb.is_file() {
        return Ok((vmfb, true, pinned));
    }
    // Pinned right: the importer sees no dynamic batch left (where it reads the model).
    if let Ok(graph) = ember_import::parse(&bytes) {
        if let Some(t) = graph.tensors().iter().find(|t| t.dynamic_batch) {
            return Err(format!(
                "`{}` still has a dynamic batch once pinned",
                t.name
            ));
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tflite = dir.join("model.tflite");
    std::fs::write(&tflite, &bytes).map_err(|e| format!("{}: {e}", tflite.display()))?;
    let mlirbc = dir.join("model.mlirbc");
    let mut convert = Command::new(bin.join("tosa-converter-for-tflite"));
    convert
        .arg(&tflite)
        .arg("--bytecode")
        .arg("-o")
        .arg(&mlirbc);
    tool(
        convert,
        &dir.join("convert.log"),
        "tosa-converter-for-tflite",
    )?;
    let partial = dir.join("model.vmfb.partial");
    let mut compile = Command::new(bin.join("iree-compile"));
    compile
        .arg(&mlirbc)
        .args(COMPILE_FLAGS)
        .arg("-o")
        .arg(&partial);
    tool(compile, &dir.join("compile.log"), "iree-compile")?;
    std::fs::rename(&partial, &vmfb).map_err(|e| format!("{}: {e}", vmfb.display()))?;
    Ok((vmfb, false, pinned))
}

/// Runs one of IREE's tools with its output into `log`; on failure, the log's last lines.
fn tool(mut c: Command, log: &Path, name: &str) -> Result {
    let out = c
        .output()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    let mut text = out.stdout;
    text.extend_from_slice(&out.stderr);
    std::fs::write(log, &text).map_err(|e| format!("{}: {e}", log.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(6)..].join("\n    ");
    Err(format!(
        "{name} failed ({}; all of it in {}):\n    {tail}",
        out.status,
        log.display()
    ))
}

/// A tool's `--version`, first lines joined (`"?"` where it does not run).
fn tool_version(tool: &Path) -> String {
    let Ok(path) = str_of(tool) else {
        return "?".into();
    };
    crate::step::output(crate::step::cmd(path, &["--version"]))
        .map(|v| {
            v.lines()
                .map(str::trim)
                .filter(|l| l.contains("version"))
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_else(|| "?".into())
}

/// The host CPU's model name and flags (`iree-compile` targets the host CPU).
fn host_cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("model name") || l.starts_with("flags"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// FNV-1a, 64 bits: the cache key (stable across runs and Rust versions, unlike
/// `DefaultHasher`).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Pins every `-1` in a tensor's `shape_signature` to 1, in place (the int32 keeps its
/// place, so nothing else in the flatbuffer moves); returns how many. Walks the TFLite
/// schema's tables: `Model.subgraphs` (field 2), `SubGraph.tensors` (field 0),
/// `Tensor.shape_signature` (field 7).
pub fn pin_dynamic_batch(b: &mut [u8]) -> Result<usize> {
    let model = uoffset(b, 0)?;
    let mut pinned = 0;
    let Some(subgraphs) = field(b, model, 2)? else {
        return Ok(0);
    };
    let (start, count) = vector(b, subgraphs)?;
    for s in 0..count {
        let subgraph = uoffset(b, start + 4 * s)?;
        let Some(tensors) = field(b, subgraph, 0)? else {
            continue;
        };
        let (start, count) = vector(b, tensors)?;
        for t in 0..count {
            let tensor = uoffset(b, start + 4 * t)?;
            let Some(signature) = field(b, tensor, 7)? else {
                continue;
            };
            let (start, count) = vector(b, signature)?;
            for d in 0..count {
                let at = start + 4 * d;
                if u32_at(b, at)? as i32 == -1 {
                    b[at..at + 4].copy_from_slice(&1i32.to_le_bytes());
                    pinned += 1;
                }
            }
        }
    }
    Ok(pinned)
}

fn u32_at(b: &[u8], at: usize) -> Result<u32> {
    b.get(at..at.wrapping_add(4))
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("flatbuffer: offset {at} out of the file"))
}

fn u16_at(b: &[u8], at: usize) -> Result<usize> {
    b.get(at..at.wrapping_add(2))
        .map(|s| usize::from(u16::from_le_bytes([s[0], s[1]])))
        .ok_or_else(|| format!("flatbuffer: offset {at} out of the file"))
}

/// The position an unsigned offset stored at `at` points to.
fn uoffset(b: &[u8], at: usize) -> Result<usize> {
    Ok(at + u32_at(b, at)? as usize)
}

/// Where field `index` of the table at `table` is, if present.
fn field(b: &[u8], table: usize, index: usize) -> Result<Option<usize>> {
    let vtable = (table as i64 - i64::from(u32_at(b, table)? as i32)) as usize;
    let vtable_len = u16_at(b, vtable)?;
    let slot = 4 + 2 * index;
    if slot + 2 > vtable_len {
        return Ok(None);
    }
    Ok(match u16_at(b, vtable + slot)? {
        0 => None,
        offset => Some(table + offset),
    })
}

/// The first element and the length of the vector a field at `at` refers to.
fn vector(b: &[u8], at: usize) -> Result<(usize, usize)> {
    let v = uoffset(b, at)?;
    Ok((v + 4, u32_at(b, v)? as usize))
}

pub fn loudly(what: &str) {
    let bar = "!".repeat(78);
    println!("\n{bar}\n!!! {what}\n{bar}");
    eprintln!("xtask: {what}");
}

#[cfg(test)]
mod tests {
    use super::pin_dynamic_batch;

    /// Pinning on every reference model: one `-1` per tensor the importer calls a dynamic
    /// batch, none left after, and nothing else in the file changed.
    #[test]
    fn pins_each_dynamic_batch_and_nothing_else() {
        let dir = crate::oracle::models_dir();
        let mut models = Vec::new();
        if dir.is_dir() {
            crate::oracle::find_models(&dir, &mut models).expect("models");
        }
        if models.is_empty() {
            crate::oracle::skipped(&format!("pinning test: no .tflite under {}", dir.display()));
            return;
        }
        let mut total = 0;
        for model in &models {
            let original = std::fs::read(model).expect("model");
            let dynamic = ember_import::parse(&original)
                .expect("parse")
                .tensors()
                .iter()
                .filter(|t| t.dynamic_batch)
                .count();
            let mut pinned = original.clone();
            let n = pin_dynamic_batch(&mut pinned).expect("pin");
            assert_eq!(n, dynamic, "{}", model.display());
            let graph = ember_import::parse(&pinned).expect("parse pinned");
            assert!(graph.tensors().iter().all(|t| !t.dynamic_batch));
            let changed = original.iter().zip(&pinned).filter(|(a, b)| a != b).count();
            assert_eq!(changed, 4 * n, "{}", model.display());
            total += n;
        }
        assert!(total > 0, "no reference model has a dynamic batch");
    }

    /// A cut-off file is an error, never a panic.
    #[test]
    fn truncated_files_are_errors() {
        assert!(pin_dynamic_batch(&mut []).is_err());
        assert!(pin_dynamic_batch(&mut [8, 0, 0, 0, 4, 0]).is_err());
        let mut far = [0xff; 16];
        assert!(pin_dynamic_batch(&mut far).is_err());
    }
}
