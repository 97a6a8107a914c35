//! `cargo xtask fuzz <target>`: runs a cargo-fuzz target of `fuzz/` for a while, from the
//! committed seeds, and reports how many inputs it tried; a crash fails with its file.

use crate::setup;
use crate::step::{cmd, output, root, run, Result};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Seconds libFuzzer gives one input before calling it a hang (`-timeout`).
const INPUT_TIMEOUT_S: u64 = 10;

/// Installs cargo-fuzz if `cargo +nightly fuzz` does not answer.
fn cargo_fuzz() -> Result {
    if output(cmd("cargo", &["+nightly", "fuzz", "--version"])).is_some() {
        return Ok(());
    }
    run(
        "install cargo-fuzz",
        cmd("cargo", &["install", "cargo-fuzz", "--locked"]),
    )
}

/// Where a target's seeds come from: `fuzz/corpus/<target>/`, except for `import`, whose
/// seeds are the reference models (`$EMBER_MODELS`, else `../shared/models` from the
/// workspace root), which the project keeps no copy of.
fn seed_files(target: &str) -> Result<Vec<PathBuf>> {
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        format!("seeds: could not {what} {}: {e}", path.display())
    };
    let mut files = Vec::new();
    if target == "import" {
        let models = match std::env::var_os("EMBER_MODELS") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => root().join("../shared/models"),
        };
        let mut dirs = vec![models.clone()];
        while let Some(dir) = dirs.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| fail("read the reference models in (set EMBER_MODELS)", &dir, e))?;
            for entry in entries {
                let path = entry.map_err(|e| fail("read", &dir, e))?.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "tflite") {
                    files.push(path);
                }
            }
        }
        if files.is_empty() {
            return Err(format!("no .tflite seeds under {}", models.display()));
        }
    } else {
        let seeds = root().join("fuzz/corpus").join(target);
        let entries = std::fs::read_dir(&seeds).map_err(|e| fail("read", &seeds, e))?;
        for entry in entries {
            let path = entry.map_err(|e| fail("read", &seeds, e))?.path();
            if path.is_file() {
                files.push(path);
            }
        }
        if files.is_empty() {
            return Err(format!("no seeds in {}", seeds.display()));
        }
    }
    files.sort();
    Ok(files)
}

/// Copies the seeds into the working corpus libFuzzer adds to, so a run leaves the seeds as
/// they were.
fn working_corpus(target: &str) -> Result<PathBuf> {
    let seeds = seed_files(target)?;
    let work = root().join("target/fuzz-corpus").join(target);
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        format!("working corpus: could not {what} {}: {e}", path.display())
    };
    std::fs::create_dir_all(&work).map_err(|e| fail("create", &work, e))?;
    for from in &seeds {
        // Reference models from different folders may share a file name: prefix the folder.
        let name = from.file_name().unwrap_or_default().to_string_lossy();
        let to = match from.parent().and_then(Path::file_name) {
            Some(folder) if target == "import" => {
                work.join(format!("{}-{name}", folder.to_string_lossy()))
            }
            _ => work.join(&*name),
        };
        std::fs::copy(from, &to).map_err(|e| fail("copy", from, e))?;
    }
    println!(
        "\n==> working corpus {} ({} seeds)",
        work.display(),
        seeds.len()
    );
    Ok(work)
}

/// `Done N runs in S second(s)`: libFuzzer's closing line.
fn done_line(line: &str) -> Option<(u64, u64)> {
    let rest = line.trim().strip_prefix("Done ")?;
    let (runs, rest) = rest.split_once(" runs in ")?;
    let (secs, _) = rest.split_once(' ')?;
    Some((runs.parse().ok()?, secs.parse().ok()?))
}

/// The file libFuzzer wrote a crashing, leaking or hanging input to, from
/// `Test unit written to PATH`.
fn crash_file(line: &str, fuzz_dir: &Path) -> Option<PathBuf> {
    let (_, path) = line.split_once("Test unit written to ")?;
    let path = Path::new(path.trim());
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        fuzz_dir.join(path)
    })
}

/// Runs `c`, echoing its stderr as it comes, and returns its status and stderr lines.
fn run_capturing_stderr(
    title: &str,
    mut c: Command,
) -> Result<(std::process::ExitStatus, Vec<String>)> {
    let mut line = format!(
        "cd {} && ",
        c.get_current_dir().unwrap_or(&root()).display()
    );
    line.push_str(&c.get_program().to_string_lossy());
    for a in c.get_args() {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    println!("\n==> {title}\n    $ {line}");
    let mut child = c
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{title}: could not start `{line}`: {e}"))?;
    let mut lines = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        for l in BufReader::new(stderr).lines() {
            let l = l.map_err(|e| format!("{title}: reading stderr of `{line}`: {e}"))?;
            eprintln!("{l}");
            lines.push(l);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("{title}: waiting for `{line}`: {e}"))?;
    Ok((status, lines))
}

/// `cargo xtask fuzz <target> --seconds N`.
pub fn fuzz(target: &str, seconds: u64) -> Result {
    // The nightly toolchain (cargo-fuzz builds with sanitizers), through the Miri helper.
    setup::miri()?;
    cargo_fuzz()?;
    let corpus = working_corpus(target)?;
    let fuzz_dir = root().join("fuzz");
    let corpus = corpus.to_string_lossy().into_owned();
    let max_time = format!("-max_total_time={seconds}");
    let timeout = format!("-timeout={INPUT_TIMEOUT_S}");
    let mut c = cmd(
        "cargo",
        &[
            "+nightly",
            "fuzz",
            "run",
            // fuzz/ is its own workspace: keep its sanitizer builds in fuzz/target even when
            // CARGO_TARGET_DIR points elsewhere.
            "--target-dir",
            "target",
            target,
            &corpus,
            "--",
            &max_time,
            &timeout,
        ],
    );
    c.current_dir(&fuzz_dir);
    let title = format!("fuzz {target} for {seconds} s");
    let started = Instant::now();
    let (status, lines) = run_capturing_stderr(&title, c)?;
    let crash = lines.iter().find_map(|l| crash_file(l, &fuzz_dir));
    if let Some(file) = crash {
        return Err(format!(
            "fuzz {target}: found a failing input: {} (replay: cd fuzz && \
             cargo +nightly fuzz run --target-dir target {target} {})",
            file.display(),
            file.display()
        ));
    }
    if !status.success() {
        return Err(format!(
            "{title}: exited with {status} after {:.1} s",
            started.elapsed().as_secs_f32()
        ));
    }
    let (runs, secs) = lines
        .iter()
        .rev()
        .find_map(|l| done_line(l))
        .ok_or_else(|| {
            format!("{title}: libFuzzer printed no `Done N runs in S second(s)` line")
        })?;
    println!("\nfuzz {target}: {runs} executions in {secs} s, no crashes");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_libfuzzer_lines() {
        assert_eq!(
            done_line("Done 123456 runs in 61 second(s)"),
            Some((123456, 61))
        );
        assert_eq!(done_line("#1024 pulse cov: 5"), None);
        let dir = Path::new("/repo/fuzz");
        assert_eq!(
            crash_file("Test unit written to ./artifacts/module/crash-ab", dir),
            Some(dir.join("./artifacts/module/crash-ab"))
        );
        assert_eq!(
            crash_file(
                "artifact_prefix='/a/'; Test unit written to /a/crash-1",
                dir
            ),
            Some(PathBuf::from("/a/crash-1"))
        );
    }
}
