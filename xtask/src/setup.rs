//! Checks and installs what the commands need: rustup targets and components, the nightly
//! toolchain with Miri, QEMU (from bookworm-backports on Debian 12), Vulkan (lavapipe from
//! bookworm-backports, the loader and the validation layer), defmt-print, and a CPython 3.11
//! that can make venvs (for the TFLM oracle). Installs when it can; otherwise stops with the
//! exact command.

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

/// The nightly toolchain with Miri and the standard library's source, and Miri's sysroots:
/// the host's and AArch64's (the tuned kernels' NEON, interpreted).
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
    )?;
    run(
        "prepare Miri's AArch64 sysroot",
        cmd(
            "cargo",
            &["+nightly", "miri", "setup", "--target", MIRI_AARCH64_TARGET],
        ),
    )
}

/// The target Miri interprets the tuned kernels' AArch64 code for.
pub const MIRI_AARCH64_TARGET: &str = "aarch64-unknown-linux-gnu";

/// A rustup target for the stable toolchain.
pub fn target(target: &str) -> Result {
    rustup_available()?;
    if !has(&installed("stable"), &format!("rust-std-{target}")) {
        run(
            &format!("install the {target} target"),
            cmd(
                "rustup",
                &["target", "add", target, "--toolchain", "stable"],
            ),
        )?;
    }
    Ok(())
}

/// The Debian packages QEMU comes in, from bookworm-backports (QEMU 10: bookworm's own QEMU
/// conflicts with the backported qemu-utils these machines carry).
const QEMU_PACKAGES: &[&str] = &["qemu-system-arm", "qemu-system-misc"];
const BACKPORTS: &str = "/etc/apt/sources.list.d/bookworm-backports.sources";
const BACKPORTS_SOURCE: &str = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n";

/// Makes sure `program` (a qemu-system-*) runs; on Debian 12 as root, installs QEMU from
/// bookworm-backports, otherwise stops with the exact commands.
pub fn qemu(program: &str) -> Result {
    if output(cmd(program, &["--version"])).is_some() {
        return Ok(());
    }
    debian_install("QEMU", &[], QEMU_PACKAGES)?;
    output(cmd(program, &["--version"]))
        .map(|_| ())
        .ok_or_else(|| format!("{program} still does not run after installing QEMU"))
}

/// Mesa's lavapipe (CPU Vulkan): its ICD file. Mesa 24.2 or newer has sparse binding.
const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.json";
/// The Khronos validation layer's manifest.
const VALIDATION_LAYER: &str = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";
/// Oldest Mesa whose lavapipe has sparse binding.
const MESA_MIN: (u32, u32) = (24, 2);

/// The installed Debian package's upstream (major, minor), if any.
fn package_version(package: &str) -> Option<(u32, u32)> {
    let v = output(cmd("dpkg-query", &["-W", "-f", "${Version}", package]))?;
    let v = v.trim().split(':').next_back()?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Makes sure the Vulkan loader, lavapipe from Mesa 24.2 or newer, and the Khronos
/// validation layer are installed: on Debian 12 as root, Mesa from bookworm-backports and
/// the loader and layer from bookworm; otherwise stops with the exact commands.
pub fn vulkan() -> Result {
    let mesa_ok = std::path::Path::new(LAVAPIPE_ICD).exists()
        && package_version("mesa-vulkan-drivers").is_none_or(|v| v >= MESA_MIN);
    let layer_ok = std::path::Path::new(VALIDATION_LAYER).exists();
    let loader_ok = output(cmd("ldconfig", &["-p"])).is_some_and(|o| o.contains("libvulkan.so.1"));
    if mesa_ok && layer_ok && loader_ok {
        return Ok(());
    }
    debian_install(
        "Vulkan (lavapipe, loader, validation layer)",
        &["libvulkan1", "vulkan-validationlayers"],
        &["mesa-vulkan-drivers"],
    )?;
    match package_version("mesa-vulkan-drivers") {
        Some(v) if v >= MESA_MIN => Ok(()),
        v => Err(format!(
            "lavapipe needs Mesa {}.{} or newer for sparse binding; installed: {v:?}",
            MESA_MIN.0, MESA_MIN.1
        )),
    }
}

/// The Python the TFLM oracle's venv is made from: `EMBER_PYTHON` where it is set, else the
/// first of `python3` and `/usr/bin/python3` that is CPython 3.11 (the only Python the pinned
/// `tflite-micro` wheel is built for) with the `venv` and `ensurepip` modules. On Debian 12
/// as root, installs `python3-venv` (Debian 12's Python is 3.11) when none has them;
/// otherwise stops with the exact command.
pub fn python_for_venv() -> Result<String> {
    const CHECK: &str =
        "import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)";
    let candidates: Vec<String> = match std::env::var("EMBER_PYTHON") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => vec!["python3".into(), "/usr/bin/python3".into()],
    };
    let usable = || {
        candidates
            .iter()
            .find(|p| output(cmd(p, &["-c", CHECK])).is_some())
            .cloned()
    };
    if let Some(python) = usable() {
        return Ok(python);
    }
    debian_install(
        "CPython 3.11 with its venv module (for the TFLM oracle)",
        &["python3", "python3-venv"],
        &[],
    )?;
    usable().ok_or_else(|| {
        format!(
            "none of {} is CPython 3.11 with the venv and ensurepip modules, which the \
             TFLM oracle's tflite-micro wheel needs (set EMBER_PYTHON to one)",
            candidates.join(", ")
        )
    })
}

/// On Debian 12 as root, installs `packages` from bookworm and `backported` from
/// bookworm-backports (adding that suite if needed); elsewhere, stops with the commands.
fn debian_install(what: &str, packages: &[&str], backported: &[&str]) -> Result {
    let mut install = format!(
        "echo '{}' > {BACKPORTS} && apt-get update",
        BACKPORTS_SOURCE.replace('\n', "\\n")
    );
    if !packages.is_empty() {
        install += &format!(" && apt-get install -y {}", packages.join(" "));
    }
    if !backported.is_empty() {
        install += &format!(
            " && apt-get install -y -t bookworm-backports {}",
            backported.join(" ")
        );
    }
    let debian12 = std::fs::read_to_string("/etc/debian_version")
        .map(|v| v.starts_with("12"))
        .unwrap_or(false);
    let root = output(cmd("id", &["-u"])).is_some_and(|u| u.trim() == "0");
    if !(debian12 && root) {
        return Err(format!(
            "{what} is not installed; on Debian 12, as root: {install}"
        ));
    }
    if !std::path::Path::new(BACKPORTS).exists() {
        println!("\n==> add the bookworm-backports suite ({BACKPORTS})");
        std::fs::write(BACKPORTS, BACKPORTS_SOURCE)
            .map_err(|e| format!("write {BACKPORTS}: {e}; run as root: {install}"))?;
    }
    run("apt-get update", cmd("apt-get", &["update", "-q"]))?;
    for (list, backports) in [(packages, false), (backported, true)] {
        if list.is_empty() {
            continue;
        }
        let mut args = vec!["install", "-y", "-q"];
        if backports {
            args.extend(["-t", "bookworm-backports"]);
        }
        args.extend_from_slice(list);
        let mut apt = cmd("apt-get", &args);
        apt.env("DEBIAN_FRONTEND", "noninteractive");
        let from = if backports {
            "bookworm-backports"
        } else {
            "bookworm"
        };
        run(&format!("install {} from {from}", list.join(" ")), apt)?;
    }
    Ok(())
}

/// The defmt-print binary xtask runs (installed into cargo's bin directory).
pub fn defmt_print() -> std::path::PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
        .unwrap_or_default();
    let path = home.join("bin").join("defmt-print");
    if path.is_file() {
        path
    } else {
        "defmt-print".into()
    }
}

/// Installs defmt-print (the host side of the firmware's defmt logs) unless it runs.
pub fn defmt_print_installed() -> Result {
    let mut version = std::process::Command::new(defmt_print());
    version.arg("--version");
    if output(version).is_some() {
        return Ok(());
    }
    run(
        "install defmt-print (decodes the firmware's defmt logs)",
        cmd(
            "cargo",
            &["install", "defmt-print", "--locked", "--version", "^1.2"],
        ),
    )
}
