//! Miri over the crates with `unsafe` or invariants worth proving, run in the background
//! beside `cargo xtask test`'s other steps: one set after another, each set's output into
//! one log, which is printed where a set fails.

use crate::boards;
use crate::step::{cmd, target_dir, Result};
use std::fs::File;
use std::os::unix::process::CommandExt;
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

/// Each set that passed, with its time in seconds.
type SetTimes = Vec<(String, f32)>;

/// What the Miri thread and the steps beside it share: the set running now, and whether
/// the steps asked Miri to stop.
#[derive(Default)]
struct Shared {
    running: Option<Child>,
    stopped: bool,
}

/// The Miri runs in the background: the thread that runs them and what it shares with the
/// other steps. Dropped before [`finish`](Self::finish), it stops Miri.
pub struct Background {
    thread: Option<JoinHandle<Result<SetTimes>>>,
    shared: Arc<Mutex<Shared>>,
    log: PathBuf,
    started: Instant,
}

/// Every Miri set as a command: the root workspace's sets, then the boards workspace's
/// firmware heap hand-over. Each runs in a process group of its own, so that stopping it
/// stops cargo's children (cargo-miri, the interpreter) too.
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
    for (_, command) in &mut commands {
        command.process_group(0);
    }
    commands
}

/// Starts every Miri set, one after another, on a thread of its own; their output goes to
/// `target/miri.log`.
pub fn start() -> Background {
    let log = target_dir().join("miri.log");
    let shared = Arc::new(Mutex::new(Shared::default()));
    let thread_shared = Arc::clone(&shared);
    let thread_log = log.clone();
    println!(
        "\n==> Miri over {} test sets, in the background (output: {})",
        MIRI_TESTS.len() + 1,
        log.display()
    );
    let thread = std::thread::spawn(move || run_all(&thread_log, &thread_shared));
    Background {
        thread: Some(thread),
        shared,
        log,
        started: Instant::now(),
    }
}

/// Locks the shared state, whether or not a holder panicked.
fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Kills `child`'s whole process group and reaps it.
fn kill_group(mut child: Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status();
    if !killed.is_ok_and(|status| status.success()) {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Runs the sets in order, stopping at the first failure or when asked to; each set's time
/// on success.
fn run_all(log: &PathBuf, shared: &Mutex<Shared>) -> Result<SetTimes> {
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
        {
            // Spawned under the lock, so that a stop either comes first (and nothing is
            // started) or finds the child to kill.
            let mut state = lock(shared);
            if state.stopped {
                return Err(format!("{title}: not started (another step failed)"));
            }
            let child = command
                .spawn()
                .map_err(|e| format!("{title}: could not start: {e}"))?;
            state.running = Some(child);
        }
        // Poll rather than wait while holding the lock, so that a stop can kill the child.
        let status = loop {
            let mut state = lock(shared);
            let Some(child) = state.running.as_mut() else {
                return Err(format!("{title}: stopped (another step failed)"));
            };
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                state.running = None;
                break status;
            }
            drop(state);
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
    /// Stops Miri: no further set starts, and the running one is killed with its children.
    fn stop(&mut self) {
        let running = {
            let mut state = lock(&self.shared);
            state.stopped = true;
            state.running.take()
        };
        if let Some(child) = running {
            kill_group(child);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Waits for Miri once the other steps ended with `rest`: where they failed, stops Miri
    /// and returns their error; otherwise returns Miri's result, printing each set's time,
    /// or the log's last lines where a set failed.
    pub fn finish(mut self, rest: Result) -> Result {
        if let Err(e) = rest {
            self.stop();
            println!(
                "\n==> Miri stopped, another step failed (its output so far: {})",
                self.log.display()
            );
            return Err(e);
        }
        println!("\n==> waiting for Miri (running in the background)");
        let waited = Instant::now();
        let outcome = match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| "Miri's thread panicked".to_string())?,
            None => Err("Miri was stopped".to_string()),
        };
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

impl Drop for Background {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}
