//! Compiles the checksum kernel (`src/checksum.wgsl`) to SPIR-V with naga and writes
//! `$OUT_DIR/checksum.rs` with its words.

use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use std::path::PathBuf;

fn main() {
    let path = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("src/checksum.wgsl");
    println!("cargo:rerun-if-changed={}", path.display());
    let source = std::fs::read_to_string(&path).expect("reading checksum.wgsl");
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("\n{}\n", e.emit_to_string(&source)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::IMMEDIATES)
        .validate(&module)
        .unwrap_or_else(|e| panic!("\n{}\n", e.emit_to_string(&source)));
    let options = spv::Options {
        lang_version: (1, 0),
        ..spv::Options::default()
    };
    let words = spv::write_vec(&module, &info, &options, None).expect("SPIR-V output");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("checksum.rs");
    std::fs::write(
        out,
        format!("pub const CHECKSUM_SPIRV: &[u32] = &{words:?};\n"),
    )
    .expect("writing checksum.rs");
}
