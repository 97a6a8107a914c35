//! Miri over the crates with `unsafe` or invariants worth proving, run in the background
//! beside `cargo xtask test`'s other steps: one set after another, each set's output into
//! one log, which is printed where a set fails.

use crate::boards;
use crate::step::{cmd, target_dir, Result};
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Test sets Miri runs: every crate with `unsafe` or invariants worth proving, as
/// `cargo miri test` arguments. The benchmark crate's `unsafe` is its peers' glue, run by a
/// small test of its own (its trace replays are far too long for Miri).
pub const MIRI_TESTS: &[(&str, &[&str])] = &[
    ("hal-core's tests", &["-p", "hal-core"]),
    (
        "hal-local's tests (inline driver, exclusive kernels)",
        &["-p", "hal-local", "--features", "exclusive"],
    ),
    (
        "hal-local's team of cores and the forks over it (threads as cores)",
        &[
            "-p",
            "hal-local",
            "--features",
            "cores,std,exclusive",
            "--lib",
            "--",
            "team",
            "workers",
        ],
    ),
    (
        "the shared device and its soak test (threads as cores)",
        &[
            "-p",
            "ember-tests",
            "--features",
            "cores",
            "--test",
            "shared_device",
        ],
    ),
    (
        "the conformance suite on the inline local driver",
        &[
            "-p",
            "ember-tests",
            "--test",
            "conformance_local",
            "--",
            // These two bind one 64 KiB range, larger than a chunk of Miri's small device.
            "--skip",
            "command_validation::limits",
            "--skip",
            "dispatch::dispatch_large",
        ],
    ),
    (
        "the benchmark peers' unsafe glue",
        &["-p", "ember-tests", "--test", "peers_miri"],
    ),
    (
        "hal-vulkan's load copy threads (no Vulkan calls)",
        &["-p", "hal-vulkan", "--lib", "--", "copier"],
    ),
    (
        "the Vulkan bench's host pool",
        &["-p", "ember-bench-vulkan"],
    ),
    (
        "the tuned kernels against the portable ones (emulated DSP instructions)",
        &["-p", "ember-kernels", "--lib", "--", "tuned", "simd"],
    ),
];

/// The Miri runs in the background: the thread that runs them, and the set running now
/// (killed where the other steps fail first).
pub struct Background {
    thread: JoinHandle<Result<Vec<(String, f32)>>>,
    running: Arc<Mutex<Option<Child>>>,
    log: PathBuf,
    started: Instant,
}

/// Every Miri set as a command: the root workspace's sets, then the boards workspace's
/// firmware heap hand-over.
fn commands() -> Vec<(String, Command)> {
    let mut commands: Vec<(String, Command)> = MIRI_TESTS
        .iter()
        .map(|(what, args)| {
            let mut miri = vec!["+nightly", "miri", "test"];
            miri.extend_from_slice(args);
            let mut command = cmd("cargo", &miri);
            // The conformance suite leaks each device's memory region on purpose (devices
            // borrow it for 'static); Miri's leak check would call that an error.
            if args.contains(&"conformance_local") || args.contains(&"shared_device") {
                command.env("MIRIFLAGS", "-Zmiri-ignore-leaks");
            }
            (format!("Miri over {what}"), command)
        })
        .collect();
    commands.push((
        "Miri over the firmware's heap hand-over (boards workspace)".to_string(),
        boards::cargo(&[
            "+nightly",
            "miri",
            "test",
            "-p",
            "ember-firmware",
            "--features",
            "std,heap",
            "--lib",
        ]),
    ));
    commands
}

/// Starts every Miri set, one after another, on a thread of its own; their output goes to
/// `target/miri.log`.
pub fn start() -> Background {
    let log = target_dir().join("miri.log");
    let running = Arc::new(Mutex::new(None::<Child>));
    let thread_running = Arc::clone(&running);
    let thread_log = log.clone();
    println!(
        "\n==> Miri over {} test sets, in the background (output: {})",
        MIRI_TESTS.len() + 1,
        log.display()
    );
    let thread = std::thread::spawn(move || run_all(&thread_log, &thread_running));
    Background {
        thread,
        running,
        log,
        started: Instant::now(),
    }
}

/// Runs the sets in order, stopping at the first failure; each set's time on success.
fn run_all(log: &PathBuf, running: &Mutex<Option<Child>>) -> Result<Vec<(String, f32)>> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut times = Vec::new();
    for (title, mut command) in commands() {
        let out = file.try_clone().map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        command.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        let started = Instant::now();
        let child = command
            .spawn()
            .map_err(|e| format!("{title}: could not start: {e}"))?;
        {
            let mut slot = running
                .lock()
                .map_err(|_| "Miri: lock poisoned".to_string())?;
            *slot = Some(child);
        }
        // Poll rather than wait while holding the lock, so that `finish` can kill the child.
        let status = loop {
            let mut slot = running
                .lock()
                .map_err(|_| "Miri: lock poisoned".to_string())?;
            let Some(child) = slot.as_mut() else {
                return Err(format!("{title}: stopped (another step failed)"));
            };
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                *slot = None;
                break status;
            }
            drop(slot);
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        let secs = started.elapsed().as_secs_f32();
        if !status.success() {
            return Err(format!("{title}: exited with {status} after {secs:.1} s"));
        }
        times.push((title, secs));
    }
    Ok(times)
}

impl Background {
    /// Waits for Miri once the other steps ended with `rest`: where they failed, stops Miri
    /// and returns their error; otherwise returns Miri's result, printing each set's time,
    /// or the log's last lines where a set failed.
    pub fn finish(self, rest: Result) -> Result {
        if let Err(e) = rest {
            if let Ok(mut slot) = self.running.lock() {
                if let Some(mut child) = slot.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
            return Err(e);
        }
        println!("\n==> waiting for Miri (running in the background)");
        let waited = Instant::now();
        let outcome = self
            .thread
            .join()
            .map_err(|_| "Miri's thread panicked".to_string())?;
        match outcome {
            Ok(times) => {
                for (title, secs) in &times {
                    println!("    ok: {title} ({secs:.1} s)");
                }
                println!(
                    "    ok: Miri, every set ({:.1} s in all, {:.1} s of it waited for here)",
                    self.started.elapsed().as_secs_f32(),
                    waited.elapsed().as_secs_f32()
                );
                Ok(())
            }
            Err(e) => {
                let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                for line in &lines[lines.len().saturating_sub(80)..] {
                    println!("    | {line}");
                }
                Err(format!("{e} (whole output: {})", self.log.display()))
            }
        }
    }
}
