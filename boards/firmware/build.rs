//! Builds the modules the firmware embeds, into `OUT_DIR`:
//!
//! - `digits`: the digits MLP, trained here exactly as `cargo xtask run` trains it (the
//!   training is deterministic, so every board gets the same weights), packed with
//!   ember-pack, and embedded with ember-build; with it, the held-out images (one byte per
//!   pixel), their labels, and the float64 reference's predictions, for the device to check
//!   its own answers against.

use ember_build::Embed;
use ember_digits::{predict_f64, predictions, train, Digits, TrainConfig};
use std::path::{Path, PathBuf};

/// The transient arena every board's device gives `queue_alloca` (the firmware reads the same
/// number from the generated `config.rs`).
const TRANSIENT_BYTES: u64 = 1024;

/// Writes only changed files, so Cargo sees nothing new on a rebuild.
fn write(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn digits(out: &Path) {
    let data = Digits::default_path();
    println!("cargo:rerun-if-changed={}", data.display());
    let digits = Digits::load_default().unwrap_or_else(|e| panic!("digits data: {e}"));
    let (train_half, held_out) = digits.split();
    let mlp = train(&train_half, &TrainConfig::default(), |_, _, _, _| {});
    let description = ember_digits::model::description(&mlp);
    let packed = ember_pack::pack(&description, out).unwrap_or_else(|e| panic!("pack: {e}"));
    let module = out.join("digits.ember");
    write(&module, &packed.bytes);
    Embed::new(&module)
        .arena_bytes(TRANSIENT_BYTES)
        .builtin_kernels()
        .build_rs("digits_module.rs");

    let images: Vec<u8> = held_out.images.iter().flatten().copied().collect();
    write(&out.join("held_out_images.bin"), &images);
    write(&out.join("held_out_labels.bin"), &held_out.labels);
    let reference = predictions(&held_out, |x| predict_f64(&mlp, x));
    write(&out.join("held_out_reference.bin"), &reference);
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    digits(&out);
    write(
        &out.join("config.rs"),
        format!("/// The transient arena of every board's device.\npub const TRANSIENT_BYTES: u64 = {TRANSIENT_BYTES};\n").as_bytes(),
    );
}
