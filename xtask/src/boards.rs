//! The boards of `boards/`: their targets, how QEMU runs them, and building, running and
//! judging their firmware.
//!
//! A QEMU board's firmware writes defmt frames to QEMU's stdout over semihosting; xtask pipes
//! them into `defmt-print -e <elf>` and judges the run by QEMU's exit status (the firmware's
//! exit code): 0 passed, 1 a failed check, 101 a panic, 102 a fault; a run past its time
//! limit is killed and fails as a hang.

use crate::setup;
use crate::step::{cmd, root, run, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One board.
#[derive(Debug, Clone, Copy)]
pub struct Board {
    /// The crate (and directory) under `boards/`.
    pub name: &'static str,
    /// Rust target; `None` for the host board.
    pub target: Option<&'static str>,
    /// QEMU program and machine arguments; `None` for the host board.
    pub qemu: Option<(&'static str, &'static [&'static str])>,
}

impl Board {
    /// The `--target` every build of the board names: its own target, or the host's triple
    /// for the host board. Naming a target on every build, the host's too, lets cargo
    /// compile build scripts and their dependencies (the importer, the digits trainer) once
    /// for all boards and steps.
    pub fn triple(&self) -> Result<String> {
        match self.target {
            Some(target) => Ok(target.to_string()),
            None => host_triple(),
        }
    }

    /// Installs what the board's firmware needs: its target, and for a QEMU board its QEMU
    /// and defmt-print.
    pub fn set_up(&self) -> Result {
        setup::stable()?;
        if let Some(target) = self.target {
            setup::target(target)?;
        }
        if let Some((program, _)) = self.qemu {
            setup::qemu(program)?;
            setup::defmt_print_installed()?;
        }
        Ok(())
    }
}

/// Every board; the first is the default.
pub const BOARDS: &[Board] = &[
    Board {
        name: "host",
        target: None,
        qemu: None,
    },
    Board {
        name: "mps2-an386",
        target: Some("thumbv7em-none-eabihf"),
        qemu: Some((
            "qemu-system-arm",
            &["-machine", "mps2-an386", "-cpu", "cortex-m4"],
        )),
    },
    Board {
        name: "lm3s6965evb",
        target: Some("thumbv7m-none-eabi"),
        qemu: Some((
            "qemu-system-arm",
            &["-machine", "lm3s6965evb", "-cpu", "cortex-m3"],
        )),
    },
    Board {
        name: "qemu-virt-riscv32",
        target: Some("riscv32imac-unknown-none-elf"),
        qemu: Some((
            "qemu-system-riscv32",
            &["-machine", "virt", "-bios", "none"],
        )),
    },
    Board {
        name: "qemu-virt-aarch64",
        target: Some("aarch64-unknown-none"),
        qemu: Some((
            "qemu-system-aarch64",
            &["-machine", "virt", "-cpu", "cortex-a53"],
        )),
    },
];

/// The host's target triple, from `rustc -vV`.
pub fn host_triple() -> Result<String> {
    static HOST: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let version = crate::step::output(cmd("rustc", &["-vV"]))?;
        version
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .map(|host| host.trim().to_string())
    })
    .clone()
    .ok_or_else(|| "`rustc -vV` did not name the host's triple".to_string())
}

/// The board called `name`, or an error listing them.
pub fn find(name: &str) -> Result<Board> {
    BOARDS
        .iter()
        .copied()
        .find(|b| b.name == name)
        .ok_or_else(|| {
            let names: Vec<_> = BOARDS.iter().map(|b| b.name).collect();
            format!("no board `{name}`; boards: {}", names.join(", "))
        })
}

/// The QEMU boards.
pub fn qemu_boards() -> impl Iterator<Item = Board> {
    BOARDS.iter().copied().filter(|b| b.qemu.is_some())
}

/// Seconds a firmware may run under QEMU before it counts as hung.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// `cargo <args>` in the boards workspace.
pub fn cargo(args: &[&str]) -> Command {
    let mut c = cmd("cargo", args);
    c.current_dir(root().join("boards"));
    c
}

/// Builds `board`'s binaries (release: the size-optimized firmware profile).
pub fn build(board: Board) -> Result {
    board.set_up()?;
    let triple = board.triple()?;
    run(
        &format!("build the {} firmware", board.name),
        cargo(&["build", "--release", "-p", board.name, "--target", &triple]),
    )
}

/// Builds `bin` of a bare-metal `board` (release) with `features`, with
/// `EMBER_MODEL_ORACLE` set to the oracle folder `model` gives (the `model` feature embeds
/// those cases) and `EMBER_ARENA_LIMIT` to its arena limit; `what` names the step. Returns the ELF: where cargo put it, or a copy in
/// `keep_in` (relative to `boards/`) where given, which later builds of the same binary
/// with other features do not replace. (One target folder for every build lets them share
/// what they have in common.)
pub fn build_bin(
    board: Board,
    bin: &str,
    features: &str,
    keep_in: Option<&str>,
    model: Option<(&std::path::Path, u64)>,
    what: &str,
) -> Result<PathBuf> {
    board.set_up()?;
    let target = board
        .target
        .ok_or_else(|| format!("{} is not a bare-metal board", board.name))?;
    let mut build = cargo(&[
        "build",
        "--release",
        "-p",
        board.name,
        "--target",
        target,
        "--features",
        features,
        "--bin",
        bin,
    ]);
    if let Some((dir, arena_limit)) = model {
        build
            .env("EMBER_MODEL_ORACLE", dir)
            .env("EMBER_ARENA_LIMIT", arena_limit.to_string());
    }
    run(what, build)?;
    let built = elf(board, bin)?;
    let Some(dir) = keep_in else {
        return Ok(built);
    };
    let dir = root().join("boards").join(dir).join(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let kept = dir.join(bin);
    std::fs::copy(&built, &kept)
        .map_err(|e| format!("copy {} to {}: {e}", built.display(), kept.display()))?;
    Ok(kept)
}

/// RAM a model firmware keeps outside its arena: the stack and the harness's other
/// statics (every board's model firmware uses under 3 KiB of each).
pub const RAM_KEPT_FROM_ARENA: u64 = 16 * 1024;

/// Bytes of `board`'s RAM region, read from its linker script (`memory.x` or `link.x`:
/// the `RAM` line's `LENGTH`, as `64K`, `4M` or hexadecimal).
pub fn ram_bytes(board: Board) -> Result<u64> {
    let dir = root().join("boards").join(board.name);
    let script = ["memory.x", "link.x"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.exists())
        .ok_or_else(|| format!("{}: no memory.x or link.x", dir.display()))?;
    let text =
        std::fs::read_to_string(&script).map_err(|e| format!("{}: {e}", script.display()))?;
    let length = text
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("RAM") && line.contains(':'))
        .find_map(|line| line.split("LENGTH").nth(1))
        .map(|rest| {
            rest.trim_start_matches([' ', '='])
                .trim()
                .trim_end_matches([',', ';'])
        })
        .ok_or_else(|| format!("{}: no RAM region with a LENGTH", script.display()))?;
    let parsed = if let Some(hex) = length.strip_prefix("0x") {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(k) = length.strip_suffix('K') {
        k.parse::<u64>().ok().map(|n| n * 1024)
    } else if let Some(m) = length.strip_suffix('M') {
        m.parse::<u64>().ok().map(|n| n * 1024 * 1024)
    } else {
        length.parse().ok()
    };
    parsed.ok_or_else(|| format!("{}: RAM LENGTH `{length}` not understood", script.display()))
}

/// The most bytes a model firmware's arena may take on `board`: its RAM less
/// [`RAM_KEPT_FROM_ARENA`].
pub fn arena_limit(board: Board) -> Result<u64> {
    Ok(ram_bytes(board)?.saturating_sub(RAM_KEPT_FROM_ARENA))
}

/// Where `board`'s binary `bin` lands: under `boards/target`, or under `CARGO_TARGET_DIR`
/// (relative to `boards/`, where [`cargo`] runs) when that is set.
pub fn elf(board: Board, bin: &str) -> Result<PathBuf> {
    let boards = root().join("boards");
    let dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(target) if !target.is_empty() => boards.join(target),
        _ => boards.join("target"),
    };
    Ok(dir.join(board.triple()?).join("release").join(bin))
}

/// How a firmware run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code (0 = passed).
    Exited(i32),
    /// Killed after [`TIMEOUT`] (or the given limit).
    Hung,
}

impl Outcome {
    /// What the outcome means, in words.
    pub fn describe(self) -> String {
        match self {
            Outcome::Exited(0) => "passed".into(),
            Outcome::Exited(1) => "a check failed (exit 1)".into(),
            Outcome::Exited(101) => "the firmware panicked (exit 101)".into(),
            Outcome::Exited(102) => "the firmware took a fault (exit 102)".into(),
            Outcome::Exited(c) => format!("exit {c}"),
            Outcome::Hung => "hung: killed at its time limit".into(),
        }
    }
}

/// Runs `bin` of a QEMU `board` under QEMU, its logs decoded by defmt-print, for at most
/// `limit`.
pub fn run_qemu(board: Board, bin: &str, limit: Duration) -> Result<Outcome> {
    run_qemu_logged(board, &elf(board, bin)?, bin, &[], limit).map(|(outcome, _)| outcome)
}

/// Runs the firmware `elf` of a QEMU `board` under QEMU with `extra` arguments
/// (`-icount shift=0`, say), its logs decoded by defmt-print, for at most `limit`; returns
/// how it ended and the decoded log, which is also printed as it comes.
pub fn run_qemu_logged(
    board: Board,
    elf: &std::path::Path,
    bin: &str,
    extra: &[&str],
    limit: Duration,
) -> Result<(Outcome, String)> {
    let (program, machine) = board
        .qemu
        .ok_or_else(|| format!("{} is not a QEMU board", board.name))?;
    let elf_arg = elf.to_string_lossy().into_owned();
    let mut qemu = Command::new(program);
    qemu.args(machine)
        .args(extra)
        .args([
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-kernel",
        ])
        .arg(elf)
        .stdout(Stdio::piped());
    println!(
        "\n==> {} `{bin}` under QEMU (limit {} s)\n    $ {program} {} {} -display none -monitor none -serial none -semihosting-config enable=on,target=native -kernel {elf_arg} | defmt-print -e {elf_arg}",
        board.name,
        limit.as_secs(),
        machine.join(" "),
        extra.join(" "),
    );
    let started = Instant::now();
    let mut qemu = qemu
        .spawn()
        .map_err(|e| format!("could not start {program}: {e}"))?;
    let frames = qemu.stdout.take().ok_or("no QEMU stdout")?;
    let mut decoder = Command::new(setup::defmt_print())
        .args(["-e", &elf_arg])
        .stdin(frames)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start defmt-print: {e}"))?;
    let decoded_out = decoder.stdout.take().ok_or("no defmt-print stdout")?;
    let tee = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut log = String::new();
        for line in std::io::BufReader::new(decoded_out)
            .lines()
            .map_while(|l| l.ok())
        {
            println!("{line}");
            log.push_str(&line);
            log.push('\n');
        }
        log
    });
    let outcome = loop {
        if let Some(status) = qemu.try_wait().map_err(|e| e.to_string())? {
            break Outcome::Exited(status.code().unwrap_or(-1));
        }
        if started.elapsed() > limit {
            let _ = qemu.kill();
            let _ = qemu.wait();
            break Outcome::Hung;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let decoded = decoder.wait().map_err(|e| e.to_string())?;
    let log = tee.join().unwrap_or_default();
    println!(
        "    {}: {} ({:.1} s)",
        board.name,
        outcome.describe(),
        started.elapsed().as_secs_f32()
    );
    if !decoded.success() && outcome == Outcome::Exited(0) {
        return Err(format!(
            "{} `{bin}`: defmt-print could not decode the logs ({decoded})",
            board.name
        ));
    }
    Ok((outcome, log))
}

/// Runs `board`'s firmware (and on QEMU boards its `minimal` binary too); fails unless
/// every run passed.
pub fn run_board(board: Board) -> Result {
    build(board)?;
    if board.qemu.is_none() {
        let triple = board.triple()?;
        return run(
            "the host board's firmware",
            cargo(&["run", "--release", "-p", board.name, "--target", &triple]),
        );
    }
    for bin in [board.name, "minimal"] {
        let outcome = run_qemu(board, bin, TIMEOUT)?;
        if outcome != Outcome::Exited(0) {
            return Err(format!(
                "{} `{bin}` under QEMU: {}",
                board.name,
                outcome.describe()
            ));
        }
    }
    Ok(())
}

/// The harness itself must fail a run that panics, fails a check, takes a fault or hangs:
/// builds mps2-an386's `probe-*` binaries and checks each outcome.
pub fn check_failures_are_caught() -> Result {
    let board = find("mps2-an386")?;
    let expected = [
        ("probe-panic", Outcome::Exited(101)),
        ("probe-fail", Outcome::Exited(1)),
        ("probe-fault", Outcome::Exited(102)),
        ("probe-hang", Outcome::Hung),
    ];
    for (bin, want) in expected {
        let got = run_qemu(board, bin, Duration::from_secs(10))?;
        if got != want {
            return Err(format!(
                "the firmware harness missed a failure: `{bin}` should end as `{}`, got `{}`",
                want.describe(),
                got.describe()
            ));
        }
        println!("    ok: `{bin}` failed the run as it must");
    }
    Ok(())
}
