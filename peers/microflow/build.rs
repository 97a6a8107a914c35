//! Links for mps2-an386 (cortex-m-rt's `link.x` over `memory.x`) and embeds TFLM's oracle
//! cases: for each model, the inputs and expected outputs read from
//! `$EMBER_ORACLE_DIR/<model>/` (default `../../target/oracle`, relative to this crate), as
//! written by Ember's `tflm_oracle.py` (`manifest.json` plus one `.npy` per tensor).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The models, by their oracle directory name (the .tflite stem).
const MODELS: [&str; 3] = ["sine", "micro_speech_quantized", "person_detect"];

/// The .tflite files the binaries compile (paths as in their `#[model]`, from this crate).
const MODEL_FILES: [&str; 3] = [
    "../../../shared/models/microflow/sine.tflite",
    "../../../shared/models/tflm/micro_speech_quantized.tflite",
    "../../../shared/models/tflm/person_detect.tflite",
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("dir"));

    fs::copy("memory.x", out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=--nmagic");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");

    println!("cargo:rerun-if-env-changed=EMBER_ORACLE_DIR");
    let oracle = match std::env::var_os("EMBER_ORACLE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir.join("../../target/oracle"),
    };
    if !oracle.is_dir() {
        panic!(
            "\n\nTFLM oracle directory {} not found.\n\
             Generate it in Ember (`cargo xtask oracle --all` writes target/oracle/), or point\n\
             EMBER_ORACLE_DIR at an existing one, e.g.\n\
             EMBER_ORACLE_DIR=/path/to/ember/target/oracle cargo build --release ...\n\n",
            oracle.display()
        );
    }
    for model in MODELS {
        embed(&oracle.join(model), model, &out);
    }
    // MicroFlow's `#[model]` reads these while compiling the binaries, but does not tell
    // cargo: rerunning this script when one changes rebuilds them.
    for model in MODEL_FILES {
        println!("cargo:rerun-if-changed={model}");
    }
}

/// Writes `$OUT_DIR/<model>.rs` (the module `oracle::<model>`) and its `.bin` data files.
fn embed(dir: &Path, model: &str, out: &Path) {
    let manifest_path = dir.join("manifest.json");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    let text = fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| panic!("\n\nreading {}: {e}\n\n", manifest_path.display()));
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("parsing {}: {e}", manifest_path.display()));

    let tensor = |key: &str| -> (Vec<usize>, f64, i64) {
        let list = manifest[key].as_array().expect("inputs/outputs");
        assert_eq!(
            list.len(),
            1,
            "{model}: MicroFlow models have one {key} tensor"
        );
        let t = &list[0];
        assert_eq!(t["dtype"], "int8", "{model}: {key} must be int8");
        let shape = t["shape"].as_array().expect("shape").iter();
        let shape = shape.map(|d| d.as_u64().expect("dim") as usize).collect();
        let scale = t["scale"][0].as_f64().expect("scale");
        let zero_point = t["zero_point"][0].as_i64().expect("zero_point");
        (shape, scale, zero_point)
    };
    let (in_shape, in_scale, in_zp) = tensor("inputs");
    let (out_shape, _, _) = tensor("outputs");
    let in_len: usize = in_shape.iter().product();
    let out_len: usize = out_shape.iter().product();

    let mut names = Vec::new();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for case in manifest["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("case name");
        let file = |key: &str| case[key][0].as_str().expect("file").to_owned();
        inputs.extend(read_npy_i8(&dir.join(file("inputs")), in_len));
        outputs.extend(read_npy_i8(&dir.join(file("outputs")), out_len));
        names.push(name.to_owned());
    }
    assert!(
        !names.is_empty(),
        "{model}: no cases in {}",
        manifest_path.display()
    );

    fs::write(out.join(format!("{model}.in.bin")), &inputs).expect("write");
    fs::write(out.join(format!("{model}.out.bin")), &outputs).expect("write");
    let mut rs = String::new();
    writeln!(rs, "/// The model's name in the result line.").unwrap();
    writeln!(rs, "pub const MODEL: &str = {model:?};").unwrap();
    writeln!(rs, "/// TFLM's input tensor shape: {in_shape:?}.").unwrap();
    writeln!(rs, "pub const IN_LEN: usize = {in_len};").unwrap();
    writeln!(rs, "/// TFLM's output tensor shape: {out_shape:?}.").unwrap();
    writeln!(rs, "pub const OUT_LEN: usize = {out_len};").unwrap();
    writeln!(rs, "/// The input's quantization scale.").unwrap();
    writeln!(rs, "pub const IN_SCALE: f32 = {:?};", in_scale as f32).unwrap();
    writeln!(rs, "/// The input's quantization zero point.").unwrap();
    writeln!(rs, "pub const IN_ZERO_POINT: i8 = {in_zp};").unwrap();
    writeln!(rs, "/// The oracle cases, in manifest order.").unwrap();
    writeln!(rs, "pub const NAMES: [&str; {}] = {names:?};", names.len()).unwrap();
    let data = |kind: &str, len: &str| {
        format!(
            "pub static {}: &[u8; {} * {len}] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{model}.{kind}.bin\"));\n",
            kind.to_uppercase() + "PUTS",
            names.len()
        )
    };
    writeln!(rs, "/// Every case's input (int8 bytes), case after case.").unwrap();
    rs += &data("in", "IN_LEN");
    writeln!(
        rs,
        "/// TFLM's output (int8 bytes) for every case, case after case."
    )
    .unwrap();
    rs += &data("out", "OUT_LEN");
    fs::write(out.join(format!("{model}.rs")), rs).expect("write");
}

/// A little-endian `.npy` of int8 (`|i1`), C order, with exactly `len` elements.
fn read_npy_i8(path: &Path, len: usize) -> Vec<u8> {
    println!("cargo:rerun-if-changed={}", path.display());
    let bytes =
        fs::read(path).unwrap_or_else(|e| panic!("\n\nreading {}: {e}\n\n", path.display()));
    let fail = |why: &str| -> ! { panic!("{}: {why}", path.display()) };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        fail("not an .npy file");
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            let b = bytes.get(8..12).unwrap_or_else(|| fail("truncated"));
            (u32::from_le_bytes(b.try_into().unwrap()) as usize, 12)
        }
        v => fail(&format!("npy version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .unwrap_or_else(|| fail("truncated"));
    let header = std::str::from_utf8(header).unwrap_or_else(|_| fail("header not UTF-8"));
    if !header.contains("'descr': '|i1'") {
        fail(&format!("expected int8 ('|i1'), header {header}"));
    }
    if header.contains("'fortran_order': True") {
        fail("Fortran order");
    }
    let data = &bytes[start + header_len..];
    if data.len() != len {
        fail(&format!("{} elements, expected {len}", data.len()));
    }
    data.to_vec()
}
