//! Checks and installs what the commands need: rustup targets and components, the nightly
//! toolchain with Miri. Installs when it can; otherwise stops with the exact command.

use crate::step::{cmd, output, run, Result};

/// Cross targets for the `no_std` crates.
pub const NO_STD_TARGET: &str = "thumbv7em-none-eabihf";

/// Makes sure `rustup` exists, for every other check.
fn rustup_available() -> Result {
    output(cmd("rustup", &["--version"]))
        .map(|_| ())
        .ok_or_else(|| {
            "rustup is not installed: install it with \
         `curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh`"
                .to_string()
        })
}

/// Installed components (and targets) of a toolchain, as rustup names them.
fn installed(toolchain: &str) -> Vec<String> {
    output(cmd(
        "rustup",
        &["component", "list", "--installed", "--toolchain", toolchain],
    ))
    .unwrap_or_default()
    .lines()
    .map(|l| l.trim().to_string())
    .collect()
}

fn has(installed: &[String], component: &str) -> bool {
    installed
        .iter()
        .any(|c| c == component || c.starts_with(&format!("{component}-")))
}

/// The stable toolchain's rustfmt, clippy, and the `no_std` cross target.
pub fn stable() -> Result {
    rustup_available()?;
    let have = installed("stable");
    for component in ["rustfmt", "clippy"] {
        if !has(&have, component) {
            run(
                &format!("install the {component} component"),
                cmd(
                    "rustup",
                    &["component", "add", component, "--toolchain", "stable"],
                ),
            )?;
        }
    }
    if !has(&have, &format!("rust-std-{NO_STD_TARGET}")) {
        run(
            &format!("install the {NO_STD_TARGET} target"),
            cmd(
                "rustup",
                &["target", "add", NO_STD_TARGET, "--toolchain", "stable"],
            ),
        )?;
    }
    Ok(())
}

/// The nightly toolchain with Miri and the standard library's source, and Miri's sysroot.
pub fn miri() -> Result {
    rustup_available()?;
    let toolchains = output(cmd("rustup", &["toolchain", "list"])).unwrap_or_default();
    if !toolchains.lines().any(|l| l.starts_with("nightly")) {
        run(
            "install the nightly toolchain (for Miri)",
            cmd(
                "rustup",
                &[
                    "toolchain",
                    "install",
                    "nightly",
                    "--profile",
                    "minimal",
                    "--component",
                    "miri,rust-src",
                ],
            ),
        )?;
    }
    let have = installed("nightly");
    for component in ["miri", "rust-src"] {
        if !has(&have, component) {
            run(
                &format!("install the nightly {component} component"),
                cmd(
                    "rustup",
                    &["component", "add", component, "--toolchain", "nightly"],
                ),
            )?;
        }
    }
    run(
        "prepare Miri's sysroot",
        cmd("cargo", &["+nightly", "miri", "setup"]),
    )
}
