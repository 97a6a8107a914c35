//! Steps that run in the background beside `cargo xtask test`'s others, on lanes: each lane
//! runs its commands one after another, its output into a log of its own, which is printed
//! where a command fails. Miri's sets run on two lanes (Miri interprets on one core); the
//! steps in the foreground fill the cores they leave idle.

use crate::step::Result;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines of a failing lane's log printed with its error.
const FAILED_LINES: usize = 80;

/// How often a lane looks at its running command and at the shared state.
const POLL: Duration = Duration::from_millis(200);

/// Commands that run one after another, each with its title, their output into `log`.
pub struct Lane {
    /// What the lane runs, for messages.
    pub name: String,
    /// Where its commands' output goes.
    pub log: PathBuf,
    /// Its commands, with their titles, in order.
    pub commands: Vec<(String, Command)>,
}

/// Each command of a lane that passed, with its time in seconds.
type Times = Vec<(String, f32)>;

/// What the lanes and the steps beside them share: the command each lane runs now, and
/// whether the lanes were asked to stop or pause.
#[derive(Default)]
struct Shared {
    /// The command each lane runs now.
    running: Vec<Option<Child>>,
    /// Set once a step or a lane failed: no further command starts.
    stopped: bool,
    /// Set while a timed step runs: the running commands are suspended and no new one starts.
    paused: bool,
    /// The lane whose command failed first (the other lanes are then stopped).
    failed: Option<usize>,
}

/// The lanes running in the background: a thread per lane and what they share with the other
/// steps. Dropped before [`finish`](Self::finish), it stops them.
pub struct Background {
    threads: Vec<JoinHandle<Result<Times>>>,
    shared: Arc<Mutex<Shared>>,
    /// Each lane's name and log, in the order they were added.
    lanes: Vec<(String, PathBuf)>,
    started: Instant,
}

impl Background {
    /// No lanes yet.
    pub fn new() -> Self {
        Self {
            threads: Vec::new(),
            shared: Arc::new(Mutex::new(Shared::default())),
            lanes: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Starts `lane` on a thread of its own. Each command runs in a process group of its own,
    /// so that stopping or pausing it reaches its children (cargo's, QEMU) too.
    pub fn add(&mut self, mut lane: Lane) {
        let count = lane.commands.len();
        println!(
            "\n==> {}: {count} command{} in the background (output: {})",
            lane.name,
            if count == 1 { "" } else { "s" },
            lane.log.display()
        );
        for (_, command) in &mut lane.commands {
            command.process_group(0);
        }
        let index = {
            let mut state = lock(&self.shared);
            state.running.push(None);
            state.running.len() - 1
        };
        self.lanes.push((lane.name, lane.log.clone()));
        let shared = Arc::clone(&self.shared);
        self.threads.push(std::thread::spawn(move || {
            run_lane(index, &lane.log, lane.commands, &shared)
        }));
    }

    /// Runs `step` with every lane suspended (a timed step, which a busy core would skew):
    /// the running commands are stopped with their children and continued afterwards, and no
    /// command starts meanwhile.
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

    /// Stops every lane: no further command starts, and the running ones are killed with
    /// their children.
    fn stop(&mut self) {
        stop_all(&self.shared);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// Waits for the lanes once the other steps ended with `rest`: where they failed, stops
    /// the lanes and returns their error; otherwise returns the lanes' result, printing each
    /// command's time and the steps a lane's log reports (`    ok: …` lines), or the failing
    /// lane's last lines.
    pub fn finish(mut self, rest: Result) -> Result {
        let logs = self
            .lanes
            .iter()
            .map(|(_, log)| log.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if let Err(e) = rest {
            self.stop();
            println!("\n==> the background lanes stopped, another step failed (their output so far: {logs})");
            return Err(e);
        }
        if self.threads.is_empty() {
            return Ok(());
        }
        println!("\n==> waiting for the background lanes");
        let waited = Instant::now();
        let outcomes: Vec<Result<Times>> = self
            .threads
            .drain(..)
            .map(|thread| {
                thread
                    .join()
                    .map_err(|_| "a background lane's thread panicked".to_string())?
            })
            .collect();
        let failed = lock(&self.shared).failed;
        let failing = failed.or_else(|| outcomes.iter().position(Result::is_err));
        if let Some(lane) = failing {
            let (name, log) = &self.lanes[lane];
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            for line in &lines[lines.len().saturating_sub(FAILED_LINES)..] {
                println!("    | {line}");
            }
            let error = match &outcomes[lane] {
                Err(e) => e.clone(),
                Ok(_) => "stopped".to_string(),
            };
            return Err(format!("{name}: {error} (whole output: {})", log.display()));
        }
        for ((name, log), times) in self.lanes.iter().zip(&outcomes) {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            for line in text.lines().filter(|line| line.starts_with("    ok: ")) {
                println!("{line}");
            }
            for (title, secs) in times.iter().flatten() {
                println!("    ok: {title} ({secs:.1} s, {name})");
            }
        }
        println!(
            "    ok: the background lanes ({:.1} s in all, {:.1} s of it waited for here)",
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

/// Runs lane `index`'s commands in order, stopping at the first failure or when asked to;
/// each command's time on success. A failure stops the other lanes too.
fn run_lane(
    index: usize,
    log: &PathBuf,
    commands: Vec<(String, Command)>,
    shared: &Mutex<Shared>,
) -> Result<Times> {
    let outcome = run_commands(index, log, commands, shared);
    if outcome.is_err() {
        {
            let mut state = lock(shared);
            if !state.stopped {
                state.failed = Some(index);
            }
        }
        stop_all(shared);
    }
    outcome
}

/// Stops every lane: no further command starts, and the running ones are killed with their
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

fn run_commands(
    index: usize,
    log: &PathBuf,
    commands: Vec<(String, Command)>,
    shared: &Mutex<Shared>,
) -> Result<Times> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut times = Vec::new();
    for (title, mut command) in commands {
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
                std::thread::sleep(POLL);
                state = lock(shared);
            }
            if state.stopped {
                return Err(format!("{title}: not started (another step failed)"));
            }
            let child = command
                .spawn()
                .map_err(|e| format!("{title}: could not start: {e}"))?;
            state.running[index] = Some(child);
        }
        // Poll rather than wait while holding the lock, so that a stop can kill the child.
        let status = loop {
            let mut state = lock(shared);
            let Some(child) = state.running[index].as_mut() else {
                return Err(format!("{title}: stopped (another step failed)"));
            };
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                state.running[index] = None;
                break status;
            }
            drop(state);
            std::thread::sleep(POLL);
        };
        let secs = started.elapsed().as_secs_f32();
        if !status.success() {
            return Err(format!("{title}: exited with {status} after {secs:.1} s"));
        }
        times.push((title, secs));
    }
    Ok(times)
}
