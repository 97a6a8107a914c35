//! Picks the tuned kernels a target's cores run (`src/tuned_variant.rs`, the rule the
//! crate also exposes as `TunedVariant::for_target`), as cfgs:
//! - `ember_dsp` (Armv7E-M's DSP extension: Cortex-M4 and Cortex-M7): each op folder's
//!   `dsp.rs`. Stable Rust does not expose Arm's `dsp` target feature to `cfg`, so the
//!   target name decides; a `target_feature` list that names `dsp` (a toolchain that
//!   exposes it) turns it on too.
//! - `ember_blocked` (Cortex-M3 and the other M-profile cores without it, RV32IMAC,
//!   AArch64): each op folder's `blocked.rs`; not with the `portable-only` feature, which
//!   trades their speed for flash.
//! - `ember_tuned` where either is on.
//! - `ember_smlal` on 32-bit Arm with Thumb-2 (Armv7 and Armv8-M Mainline): the output
//!   stage's 64-bit multiply-accumulate as SMLAL with the rounding's carry in `asm!`.

include!("src/tuned_variant.rs");

fn main() {
    for cfg in ["ember_dsp", "ember_blocked", "ember_tuned", "ember_smlal"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/tuned_variant.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let features: Vec<&str> = features.split(',').collect();
    let portable_only = std::env::var_os("CARGO_FEATURE_PORTABLE_ONLY").is_some();
    let cfg = match tuned_variant_name(&target, &features) {
        Some("dsp") => Some("ember_dsp"),
        Some("blocked") if !portable_only => Some("ember_blocked"),
        _ => None,
    };
    let thumb2 = ["thumbv7", "thumbv8m.main", "armv7"];
    if thumb2.iter().any(|prefix| target.starts_with(prefix)) {
        println!("cargo::rustc-cfg=ember_smlal");
    }
    if let Some(cfg) = cfg {
        println!("cargo::rustc-cfg={cfg}");
        println!("cargo::rustc-cfg=ember_tuned");
    }
}
