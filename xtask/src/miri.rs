//! Miri over the crates with `unsafe` or invariants worth proving, run in the background
//! beside `cargo xtask test`'s other steps, on two lanes (Miri interprets on one core): each
//! lane runs its sets one after another, its output into a log of its own, which is printed
//! where a set fails.

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
/// `cargo miri test` arguments, each on one of the two [`LANES`]. The lanes are balanced by
/// the sets' times on the 2-core CI machine: the conformance suite alone takes as long as
/// most of the others together. The benchmark crate's `unsafe` is its peers' glue, run by a
/// small test of its own (its trace replays are far too long for Miri).
pub const MIRI_TESTS: &[(&str, usize, &[&str])] = &[
    ("hal-core's tests", 1, &["-p", "hal-core"]),
    (
        "hal-local's tests (inline driver, exclusive kernels)",
        1,
        &["-p", "hal-local", "--features", "exclusive"],
    ),
    (
        "hal-local's team of cores and the forks over it (threads as cores)",
        1,
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
        1,
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
        0,
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
        0,
        &["-p", "ember-tests", "--test", "peers_miri"],
    ),
    (
        "hal-vulkan's load copy threads (no Vulkan calls)",
        1,
        &["-p", "hal-vulkan", "--lib", "--", "copier"],
    ),
    (
        "the Vulkan bench's host pool",
        0,
        &["-p", "ember-bench-vulkan"],
    ),
    (
        "the tuned kernels against the portable ones (emulated DSP instructions)",
        1,
        &["-p", "ember-kernels", "--lib", "--", "tuned", "simd"],
    ),
];

/// How many Miri sets run at once.
pub const LANES: usize = 2;

/// The lane of the boards workspace's set (the firmware's heap hand-over).
const FIRMWARE_LANE: usize = 1;

/// Each set that passed, with its time in seconds.
type SetTimes = Vec<(String, f32)>;

/// What the Miri lanes and the steps beside them share: the set each lane runs now, and
/// whether Miri was asked to stop or pause.
#[derive(Default)]
struct Shared {
    /// The set each lane runs now.
    running: [Option<Child>; LANES],
    /// Set once a step or a lane failed: no further set starts.
    stopped: bool,
    /// Set while a timed step runs: the running set is suspended and no new one starts.
    paused: bool,
    /// The lane whose set failed first (the other lane is then stopped).
    failed: Option<usize>,
}

/// The Miri runs in the background: a thread per lane and what they share with the other
/// steps. Dropped before [`finish`](Self::finish), it stops Miri.
pub struct Background {
    threads: Vec<JoinHandle<Result<SetTimes>>>,
    shared: Arc<Mutex<Shared>>,
    logs: Vec<PathBuf>,
    started: Instant,
}

/// The Miri sets of `lane` as commands: the root workspace's, then (on its lane) the boards
/// workspace's firmware heap hand-over (`ember-heap`). Each runs in a process group of its own, so that
/// stopping it stops cargo's children (cargo-miri, the interpreter) too.
fn commands(lane: usize) -> Vec<(String, Command)> {
    let mut commands: Vec<(String, Command)> = MIRI_TESTS
        .iter()
        .filter(|(_, on, _)| *on == lane)
        .map(|(what, _, args)| {
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
    if lane == FIRMWARE_LANE {
        commands.push((
            "Miri over the firmware's heap hand-over (ember-heap, boards workspace)".to_string(),
            boards::cargo(&["+nightly", "miri", "test", "-p", "ember-heap"]),
        ));
    }
    for (_, command) in &mut commands {
        command.process_group(0);
    }
    commands
}

/// Starts every Miri set: each lane's one after another, on a thread of its own; each lane's
/// output goes to `target/miri-lane-N.log`.
pub fn start() -> Background {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let logs: Vec<PathBuf> = (1..=LANES)
        .map(|lane| target_dir().join(format!("miri-lane-{lane}.log")))
        .collect();
    println!(
        "\n==> Miri over {} test sets on {LANES} lanes, in the background (output: {})",
        MIRI_TESTS.len() + 1,
        logs.iter()
            .map(|log| log.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let threads = logs
        .iter()
        .enumerate()
        .map(|(lane, log)| {
            let shared = Arc::clone(&shared);
            let log = log.clone();
            std::thread::spawn(move || run_lane(lane, &log, &shared))
        })
        .collect();
    Background {
        threads,
        shared,
        logs,
        started: Instant::now(),
    }
}

/// Locks the shared state, whether or not a holder panicked.
fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `signal` (`KILL`, `STOP`, `CONT`) to `child`'s whole process group; whether it
/// was delivered.
fn signal_group(child: &Child, signal: &str) -> bool {
    let group = format!("-{}", child.id());
    Command::new("kill")
        .args([&format!("-{signal}"), "--", &group])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Kills `child`'s whole process group and reaps it.
fn kill_group(mut child: Child) {
    if !signal_group(&child, "KILL") {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Runs `lane`'s sets in order, stopping at the first failure or when asked to; each set's
/// time on success. A failure stops the other lane too.
fn run_lane(lane: usize, log: &PathBuf, shared: &Mutex<Shared>) -> Result<SetTimes> {
    let outcome = run_sets(lane, log, shared);
    if outcome.is_err() {
        {
            let mut state = lock(shared);
            if !state.stopped {
                state.failed = Some(lane);
            }
        }
        stop_all(shared);
    }
    outcome
}

/// Stops every lane: no further set starts, and the running ones are killed with their
/// children.
fn stop_all(shared: &Mutex<Shared>) {
    let running: Vec<Child> = {
        let mut state = lock(shared);
        state.stopped = true;
        state.running.iter_mut().filter_map(Option::take).collect()
    };
    for child in running {
        kill_group(child);
    }
}

fn run_sets(lane: usize, log: &PathBuf, shared: &Mutex<Shared>) -> Result<SetTimes> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut times = Vec::new();
    for (title, mut command) in commands(lane) {
        let out = file.try_clone().map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        command.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        let started = Instant::now();
        {
            // Spawned under the lock, so that a stop either comes first (and nothing is
            // started) or finds the child to kill.
            let mut state = lock(shared);
            while state.paused && !state.stopped {
                drop(state);
                std::thread::sleep(std::time::Duration::from_millis(200));
                state = lock(shared);
            }
            if state.stopped {
                return Err(format!("{title}: not started (another step failed)"));
            }
            let child = command
                .spawn()
                .map_err(|e| format!("{title}: could not start: {e}"))?;
            state.running[lane] = Some(child);
        }
        // Poll rather than wait while holding the lock, so that a stop can kill the child.
        let status = loop {
            let mut state = lock(shared);
            let Some(child) = state.running[lane].as_mut() else {
                return Err(format!("{title}: stopped (another step failed)"));
            };
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                state.running[lane] = None;
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
    /// Runs `step` with Miri suspended (a timed step, which a busy core would skew): the
    /// running sets are stopped with their children and continued afterwards, and no set
    /// starts meanwhile.
    pub fn paused<T>(&self, step: impl FnOnce() -> T) -> T {
        {
            let mut state = lock(&self.shared);
            state.paused = true;
            for child in state.running.iter().flatten() {
                signal_group(child, "STOP");
            }
        }
        let out = step();
        let mut state = lock(&self.shared);
        state.paused = false;
        for child in state.running.iter().flatten() {
            signal_group(child, "CONT");
        }
        out
    }

    /// Stops Miri: no further set starts, and the running ones are killed with their
    /// children.
    fn stop(&mut self) {
        stop_all(&self.shared);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Waits for Miri once the other steps ended with `rest`: where they failed, stops Miri
    /// and returns their error; otherwise returns Miri's result, printing each set's time,
    /// or the failing lane's last lines.
    pub fn finish(mut self, rest: Result) -> Result {
        let logs = self
            .logs
            .iter()
            .map(|log| log.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if let Err(e) = rest {
            self.stop();
            println!("\n==> Miri stopped, another step failed (its output so far: {logs})");
            return Err(e);
        }
        println!("\n==> waiting for Miri (running in the background)");
        let waited = Instant::now();
        let outcomes: Vec<Result<SetTimes>> = self
            .threads
            .drain(..)
            .map(|thread| {
                thread
                    .join()
                    .map_err(|_| "a Miri lane's thread panicked".to_string())?
            })
            .collect();
        let failed = lock(&self.shared).failed;
        let failing = failed.or_else(|| outcomes.iter().position(Result::is_err));
        if let Some(lane) = failing {
            let log = &self.logs[lane];
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            for line in &lines[lines.len().saturating_sub(80)..] {
                println!("    | {line}");
            }
            let error = match &outcomes[lane] {
                Err(e) => e.clone(),
                Ok(_) => "stopped".to_string(),
            };
            return Err(format!("{error} (whole output: {})", log.display()));
        }
        for (lane, times) in outcomes.iter().enumerate() {
            for (title, secs) in times.iter().flatten() {
                println!("    ok: {title} ({secs:.1} s, lane {})", lane + 1);
            }
        }
        println!(
            "    ok: Miri, every set ({:.1} s in all, {:.1} s of it waited for here)",
            self.started.elapsed().as_secs_f32(),
            waited.elapsed().as_secs_f32()
        );
        Ok(())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop();
        }
    }
}
