//! Turns on the `ember_dsp` cfg for targets whose cores all have Armv7E-M's DSP extension
//! (`thumbv7em-*`: Cortex-M4 and Cortex-M7), where each op folder's `dsp.rs` replaces
//! the portable inner loops. Stable Rust does not expose Arm's `dsp` target feature to `cfg`,
//! so the target name decides; a `target_feature` list that names `dsp` (a toolchain that
//! exposes it) turns it on too.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(ember_dsp)");
    println!("cargo::rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let dsp_feature = features.split(',').any(|f| f == "dsp");
    if arch == "arm" && (target.starts_with("thumbv7em") || dsp_feature) {
        println!("cargo::rustc-cfg=ember_dsp");
    }
}
