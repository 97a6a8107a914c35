//! Running one visible step: print the command, run it, fail loudly.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Why a step failed, with the command line to reproduce it.
pub type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root (the parent of this crate's directory).
pub fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The workspace's target directory: `CARGO_TARGET_DIR` (relative to the workspace root when
/// relative) where it is set, else `target/` at the root.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// A command to run at the workspace root, with `args` after `program`.
pub fn cmd(program: &str, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args).current_dir(root());
    c
}

fn describe(c: &Command) -> String {
    let mut s = String::new();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            s.push_str(&format!("{}={} ", k.to_string_lossy(), v.to_string_lossy()));
        }
    }
    s.push_str(&c.get_program().to_string_lossy());
    for a in c.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `c` with inherited output under the heading `title`; an error names the command.
pub fn run(title: &str, mut c: Command) -> Result {
    let line = describe(&c);
    println!("\n==> {title}\n    $ {line}");
    let started = Instant::now();
    let status = c
        .status()
        .map_err(|e| format!("{title}: could not start `{line}`: {e}"))?;
    let secs = started.elapsed().as_secs_f32();
    if status.success() {
        println!("    ok: {title} ({secs:.1} s)");
        Ok(())
    } else {
        Err(format!(
            "{title}: `{line}` exited with {status} after {secs:.1} s"
        ))
    }
}

/// Runs `c` quietly and returns its stdout, or `None` if it failed or could not start.
pub fn output(mut c: Command) -> Option<String> {
    let out = c.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
