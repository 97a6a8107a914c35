//! Miri over the crates with `unsafe` or invariants worth proving, run in the background
//! beside `cargo xtask test`'s other steps on two [lanes](crate::background) (Miri interprets
//! on one core), each running its sets one after another.

use crate::background::Lane;
use crate::boards;
use crate::step::{cmd, target_dir};
use std::process::Command;

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
        "the tuned kernels against the portable ones (emulated DSP instructions; the register-blocked kernels)",
        1,
        &["-p", "ember-kernels", "--lib", "--", "tuned", "simd"],
    ),
    (
        "the tuned kernels on AArch64 (the register-blocked FULLY_CONNECTED's NEON)",
        0,
        &[
            "--target",
            crate::setup::MIRI_AARCH64_TARGET,
            "-p",
            "ember-kernels",
            "--lib",
            "--",
            "tuned",
        ],
    ),
];

/// How many Miri sets run at once.
pub const LANES: usize = 2;

/// The lane of the boards workspace's set (the firmware's heap hand-over).
const FIRMWARE_LANE: usize = 1;

/// The Miri sets of `lane` as commands: the root workspace's, then (on its lane) the boards
/// workspace's firmware heap hand-over (`ember-heap`).
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
    commands
}

/// Miri's sets as background lanes, their output in `target/miri-lane-N.log`.
pub fn lanes() -> Vec<Lane> {
    (0..LANES)
        .map(|lane| Lane {
            name: format!("Miri lane {}", lane + 1),
            log: target_dir().join(format!("miri-lane-{}.log", lane + 1)),
            commands: commands(lane),
        })
        .collect()
}
