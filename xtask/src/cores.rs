//! The multi-core board: `qemu-virt-aarch64` built with `cores` and run under
//! `qemu-system-aarch64 -smp 2` with multi-threaded TCG (each core on its own host thread),
//! its second core serving the firmware's team of cores.
//!
//! - the firmware: digits and the dispatch areas of the conformance suite on both cores;
//! - a reference model: every case checked against TFLM on one core and on two, both timed
//!   in one run (`EMBER-CORES` line). Multi-threaded TCG cannot run under `-icount`, so the
//!   measure (`PMCCNTR_EL0`) counts time, not instructions: QEMU's virtual clock in ns.
//!
//! Each build's ELF is copied to its own folder (`boards/target/cores`), so that the
//! single-core builds other steps make and measure never replace it.

use crate::board_models::{self, model_file, ALL};
use crate::boards::{self, Board, Outcome};
use crate::oracle;
use crate::step::{root, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The multi-core board.
pub const BOARD: &str = "qemu-virt-aarch64";
/// QEMU arguments: two cores, each on its own host thread.
pub const QEMU_ARGS: &[&str] = &["-smp", "2", "-accel", "tcg,thread=multi"];
/// Where the `cores` builds' ELFs are kept, relative to `boards/`.
const TARGET_DIR: &str = "target/cores";

/// One model on one core and on two, as the firmware reported it.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Virtual-clock ns per inference on one core: the fastest of 7 rounds, each the median
    /// of 5 after a warm-up.
    pub one_core: u64,
    /// The same on two cores.
    pub two_cores: u64,
    /// The median round on one core.
    pub one_core_median: u64,
    /// The median round on two cores.
    pub two_cores_median: u64,
    /// Forks that ran on both cores during the two-core pass.
    pub forks: u64,
}

impl Timing {
    /// How many times shorter an inference is on two cores.
    pub fn speedup(&self) -> f64 {
        self.one_core as f64 / self.two_cores.max(1) as f64
    }

    /// The same from the median rounds.
    pub fn median_speedup(&self) -> f64 {
        self.one_core_median as f64 / self.two_cores_median.max(1) as f64
    }
}

fn board() -> Result<Board> {
    boards::find(BOARD)
}

/// Builds `bin` of the board with `features` (and `cores`); returns its ELF, kept in
/// [`TARGET_DIR`].
fn build(bin: &str, features: &str, oracle_dir: Option<&std::path::Path>) -> Result<PathBuf> {
    let board = board()?;
    let features = format!("cores{features}");
    let arena_limit = boards::arena_limit(board)?;
    boards::build_bin(
        board,
        bin,
        &features,
        Some(TARGET_DIR),
        oracle_dir.map(|dir| (dir, arena_limit)),
        &format!("build {}'s `{bin}` for two cores ({features})", board.name),
    )
}

/// The number after `key=` on the line of `log` that holds `marker`.
fn field(log: &str, marker: &str, key: &str) -> Option<u64> {
    let line = log.lines().find(|l| l.contains(marker))?;
    line.split_whitespace()
        .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// Forks that ran on both cores, from the firmware's `cores:` line.
fn forks(log: &str) -> Option<u64> {
    let line = log
        .lines()
        .find(|l| l.contains("forks ran on both cores"))?;
    line.split_whitespace()
        .skip_while(|w| *w != "cores:")
        .nth(1)?
        .parse()
        .ok()
}

/// Runs `elf` on two cores; fails unless it passed and reported its forks, and (where
/// `must_fork`) the second core ran some.
fn run_two_cores(elf: &std::path::Path, bin: &str, must_fork: bool) -> Result<(String, u64)> {
    let board = board()?;
    let (outcome, log) =
        boards::run_qemu_logged(board, elf, bin, QEMU_ARGS, Duration::from_secs(600))?;
    if outcome != Outcome::Exited(0) {
        return Err(format!("{bin} on two cores: {}", outcome.describe()));
    }
    let forks = forks(&log).ok_or_else(|| format!("{bin}: no `cores:` line in its log"))?;
    if must_fork && forks == 0 {
        return Err(format!("{bin}: the second core ran no fork"));
    }
    Ok((log, forks))
}

/// `cargo xtask run --board qemu-virt-aarch64 --cores 2`: the firmware on two cores.
pub fn firmware() -> Result {
    let elf = build(BOARD, "", None)?;
    let (_, forks) = run_two_cores(&elf, BOARD, true)?;
    println!("\n{BOARD} on two cores: passed; {forks} forks ran on both cores");
    Ok(())
}

/// `model` on one core and on two in one run; fails unless every output of both passes
/// equals TFLM's, and, where `must_fork` (a model with convolutions over several rows),
/// unless some of its work ran on both cores.
pub fn model(model: &str, must_fork: bool) -> Result<Timing> {
    let cases = oracle::cases_for(&model_file(model)?)?;
    let elf = build("model", ",model", Some(&cases))?;
    // A model whose layers are all one row (hello_world's) forks nothing.
    let (log, forks) = run_two_cores(&elf, "model", must_fork)?;
    let get = |key| {
        field(&log, "EMBER-CORES", key)
            .ok_or_else(|| format!("{model}: no `{key}` on an EMBER-CORES line"))
    };
    if get("mismatches")? != 0 {
        return Err(format!("{model} on two cores differs from TFLM"));
    }
    Ok(Timing {
        one_core: get("one_core")?,
        two_cores: get("two_cores")?,
        one_core_median: get("one_core_median")?,
        two_cores_median: get("two_cores_median")?,
        forks,
    })
}

/// `cargo xtask run --board qemu-virt-aarch64 --model M --cores 2`; where `must_fork`, it
/// fails unless some of the model's work ran on both cores.
pub fn run_one(name: &str, must_fork: bool) -> Result {
    let t = model(name, must_fork)?;
    println!(
        "\n{name} on {BOARD}: every output equal to TFLM's on one core and on two; {} ns per inference on one core, {} on two (fastest of 7 rounds): {:.2}x, median rounds {:.2}x ({} forks on both cores; QEMU's virtual clock under multi-threaded TCG)",
        t.one_core,
        t.two_cores,
        t.speedup(),
        t.median_speedup(),
        t.forks
    );
    Ok(())
}

/// Every check on the multi-core board (`cargo xtask test`): the firmware, and `models`
/// (where the reference models are present, each with convolutions over several rows)
/// bit-exact on one core and on two, each with work forked onto both.
pub fn test(models: &[&str]) -> Result {
    firmware()?;
    if board_models::models_present() {
        for name in models {
            run_one(name, true)?;
        }
    }
    Ok(())
}

/// Where `cargo xtask bench cores` writes its figures.
pub fn bench_json() -> PathBuf {
    root().join("target").join("bench").join("cores.json")
}

/// `cargo xtask bench cores`: every reference model on one core and on two, in one run
/// each; prints the table and writes [`bench_json`].
pub fn bench() -> Result {
    let mut rows = Vec::new();
    for name in ALL {
        rows.push((*name, model(name, false)?));
    }
    let mut table = String::from(
        "\n| model | one core, ns | two cores, ns | speedup | median rounds: speedup | forks on both cores |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let mut json = format!(
        "{{\n  \"board\": \"{BOARD}\",\n  \"qemu\": \"{}\",\n  \"measure\": \"ns per inference on QEMU's virtual clock (PMCCNTR_EL0) under multi-threaded TCG: 7 rounds alternating one core and two in one run, each round the median of 5 after a warm-up; one_core/two_cores the fastest round, *_median the median round; every output checked against TFLM's on one core and on two\",\n  \"models\": {{\n",
        QEMU_ARGS.join(" ")
    );
    for (i, (name, t)) in rows.iter().enumerate() {
        table.push_str(&format!(
            "| {name} | {} | {} | {:.2}x | {:.2}x | {} |\n",
            t.one_core,
            t.two_cores,
            t.speedup(),
            t.median_speedup(),
            t.forks
        ));
        json.push_str(&format!(
            "    \"{name}\": {{\"one_core\": {}, \"two_cores\": {}, \"speedup\": {:.3}, \"one_core_median\": {}, \"two_cores_median\": {}, \"median_speedup\": {:.3}, \"forks\": {}}}{}\n",
            t.one_core,
            t.two_cores,
            t.speedup(),
            t.one_core_median,
            t.two_cores_median,
            t.median_speedup(),
            t.forks,
            if i + 1 < rows.len() { "," } else { "" }
        ));
    }
    json.push_str("  }\n}\n");
    println!("{table}");
    let path = bench_json();
    std::fs::create_dir_all(path.parent().ok_or("bench dir")?).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_firmware_lines() {
        let log = "cores: 324 forks ran on both cores\nEMBER-CORES model=m cores=2 one_core=57 two_cores=29 one_core_median=60 two_cores_median=31 cases=6 mismatches=0\n";
        assert_eq!(forks(log), Some(324));
        assert_eq!(field(log, "EMBER-CORES", "one_core"), Some(57));
        assert_eq!(field(log, "EMBER-CORES", "cores"), Some(2));
        assert_eq!(field(log, "EMBER-CORES", "two_cores_median"), Some(31));
        assert_eq!(field(log, "EMBER-CORES", "core"), None);
        assert_eq!(forks("nothing"), None);
    }
}
