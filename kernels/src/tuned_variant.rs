// Included by `build.rs` as well as compiled into the crate: the one rule for which tuned
// kernels a target runs. Plain `std`-free Rust, no crate paths.

/// The tuned kernels a target's cores run, by name: `"dsp"` where every core has Armv7E-M's
/// DSP extension (a `thumbv7em-*` target, or a 32-bit Arm one whose `target_features` name
/// `dsp`), `"blocked"` (the register-blocked kernels) on the other 32-bit Arm M-profile
/// targets, RISC-V without the vector extension (`v`) and AArch64, and `None` elsewhere
/// (the portable loops alone).
pub(crate) fn tuned_variant_name(target: &str, target_features: &[&str]) -> Option<&'static str> {
    let arm32 = target.starts_with("thumb") || target.starts_with("arm");
    if arm32 && (target.starts_with("thumbv7em") || target_features.contains(&"dsp")) {
        Some("dsp")
    } else if target.starts_with("thumbv")
        || (target.starts_with("riscv") && !target_features.contains(&"v"))
        || target.starts_with("aarch64")
    {
        Some("blocked")
    } else {
        None
    }
}
