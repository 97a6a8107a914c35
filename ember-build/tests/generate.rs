//! `Embed` on module files built with `ModuleBuilder`: the source it generates, and the
//! errors (with their exact messages) for modules a board cannot run.

use ember_build::{Embed, EmbedError};
use hal_core::module::{Module, ModuleBuilder};
use std::path::{Path, PathBuf};

/// An empty scratch directory for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ember-build-generate")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// 16 inputs → 400 hidden → 16 outputs: `infer`'s two transients (1600 and 64 bytes) are
/// live together at step 2, so its arena is 1664 bytes. With `conv`, executable 2 is a
/// `conv2d_f32` that the last step dispatches.
fn digits(conv: bool) -> Vec<u8> {
    let mut b = ModuleBuilder::new("digits");
    let matmul = b.executable("matmul_f32");
    let relu = b.executable("relu_f32");
    let last = b.executable(if conv { "conv2d_f32" } else { "softmax_f32" });
    let w1 = b.constant("w1", &vec![0; 16 * 400 * 4]);
    let w2 = b.constant("w2", &vec![0; 400 * 16 * 4]);
    let f = b.function("infer", &[16 * 4], &[16 * 4]);
    let (x, y) = (b.argument(f, 0), b.result(f, 0));
    let h = b.transient(f, 400 * 4);
    let o = b.transient(f, 16 * 4);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 16, 400], &[x, w1, h]);
    b.dispatch(f, relu, [1, 1, 1], &[], &[h, h]);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 400, 16], &[h, w2, o]);
    b.dispatch(f, last, [1, 1, 1], &[1, 16], &[o, y]);
    b.finish().expect("digits builds").bytes
}

/// Writes `bytes` to `dir/digits.ember`.
fn module_file(dir: &Path, bytes: &[u8]) -> PathBuf {
    let path = dir.join("digits.ember");
    std::fs::write(&path, bytes).expect("write module");
    path
}

#[test]
fn generates_statics_for_a_module_that_fits() {
    let bytes = digits(false);
    let path = module_file(&scratch("fits"), &bytes);
    let source = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect("fits");

    let module = Module::parse(&bytes).expect("valid");
    let sizes = module.sizes();
    for expected in [
        "#[repr(C, align(64))]".to_owned(),
        format!("pub struct ModuleBytes(pub [u8; {}]);", bytes.len()),
        "pub static MODULE_BYTES: ModuleBytes = ModuleBytes([\n    0x45, 0x4d,".to_owned(),
        "pub const MODULE_NAME: &str = \"digits\";".to_owned(),
        "pub const ARENA_BYTES: u64 = 1664;".to_owned(),
        "pub static MODULE: ::hal_core::module::Module<'static> =".to_owned(),
        "::hal_core::module::Module::prevalidated(".to_owned(),
        format!("pool_len: {},", sizes.pool),
        format!("        {},\n", sizes.header),
        format!("ember_range(&MODULE_BYTES.0, 256, {}),", sizes.pool),
        "pub static KERNELS: [::hal_local::kernel::Kernel; 3] = [\n\
         \x20   ::hal_local::kernels::MATMUL_F32, // executable 0: \"matmul_f32\"\n\
         \x20   ::hal_local::kernels::RELU_F32, // executable 1: \"relu_f32\"\n\
         \x20   ::hal_local::kernels::SOFTMAX_F32, // executable 2: \"softmax_f32\"\n\
         ];"
        .to_owned(),
        "    assert!(same_name(::hal_local::kernels::RELU_F32.name, \"relu_f32\"), \
         \"ember-build: `::hal_local::kernels::RELU_F32` is not the kernel named \\\"relu_f32\\\"\");"
            .to_owned(),
    ] {
        assert!(
            source.contains(&expected),
            "missing {expected:?} in:\n{source}"
        );
    }
    // Every table of the header is a slice of the aligned static.
    for (name, seq) in [
        ("executables", module.executables().encoded()),
        ("constants", module.constants().encoded()),
        ("functions", module.functions().encoded()),
    ] {
        let start = seq.as_ptr() as usize - bytes.as_ptr() as usize;
        let len = seq.len();
        let expected = format!("{name}: ::hal_core::module::Seq::from_encoded(");
        let line = source
            .lines()
            .find(|l| l.trim_start().starts_with(&expected))
            .expect("table");
        assert!(
            line.ends_with(&format!("ember_range(&MODULE_BYTES.0, {start}, {len})),")),
            "{line}"
        );
    }
    // Only the kernels the module uses are linked.
    assert!(!source.contains("ADD_F32"));
    assert!(!source.contains("unsafe"));
    assert!(!source.contains("std::"));

    // The arena may be exactly the plan's size.
    Embed::new(&path)
        .arena_bytes(1664)
        .builtin_kernels()
        .generate()
        .expect("exactly fits");
}

#[test]
fn a_plan_bigger_than_the_arena_is_refused() {
    let path = module_file(&scratch("too_big"), &digits(false));
    let err = Embed::new(&path)
        .arena_bytes(1024)
        .builtin_kernels()
        .generate()
        .expect_err("does not fit");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: function `infer` needs a 1664-byte arena; the board gives 1024",
            path.display()
        )
    );
    assert!(matches!(
        err,
        EmbedError::ArenaTooSmall { ref function, needed: 1664, available: 1024, .. }
            if function == "infer"
    ));
    let err = Embed::new(&path)
        .arena_bytes(1663)
        .builtin_kernels()
        .generate()
        .expect_err("one byte short");
    assert!(err
        .to_string()
        .ends_with("needs a 1664-byte arena; the board gives 1663"));
}

#[test]
fn a_kernel_that_is_not_linked_is_refused() {
    let path = module_file(&scratch("unknown_kernel"), &digits(true));
    let err = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect_err("conv2d_f32 is not built in");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: executable 2 names kernel `conv2d_f32`, which is not linked; linked: \
             add_f32, copy_u32, fill_u32, matmul_f32, mlp_softmax_f32, mul_f32, noop, relu_f32, \
             softmax_f32",
            path.display()
        )
    );
    assert!(matches!(
        err,
        EmbedError::UnknownKernel { executable: 2, ref kernel, .. } if kernel == "conv2d_f32"
    ));

    let err = Embed::new(&path)
        .arena_bytes(4096)
        .generate()
        .expect_err("nothing linked");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: executable 0 names kernel `matmul_f32`, which is not linked; linked: \
             none (call `Embed::builtin_kernels` or `Embed::kernels`)",
            path.display()
        )
    );

    // The firmware's own kernel, at its own path.
    let source = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .kernels(&[("conv2d_f32", "crate::kernels::CONV2D_F32")])
        .generate()
        .expect("conv2d_f32 is linked");
    assert!(source.contains("    crate::kernels::CONV2D_F32, // executable 2: \"conv2d_f32\"\n"));
    assert!(source.contains(
        "    assert!(same_name(crate::kernels::CONV2D_F32.name, \"conv2d_f32\"), \
         \"ember-build: `crate::kernels::CONV2D_F32` is not the kernel named \\\"conv2d_f32\\\"\");"
    ));
}

#[test]
fn a_later_path_for_a_name_replaces_the_built_in() {
    let path = module_file(&scratch("override"), &digits(false));
    let source = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .kernels(&[("relu_f32", "::fast::RELU_F32")])
        .generate()
        .expect("fits");
    assert!(source.contains("    ::fast::RELU_F32, // executable 1"));
    assert!(!source.contains("::hal_local::kernels::RELU_F32"));
}

#[test]
fn a_kernel_named_twice_is_listed_twice_and_checked_once() {
    let mut b = ModuleBuilder::new("twice");
    let first = b.executable("add_f32");
    let second = b.executable("add_f32");
    let f = b.function("add", &[64], &[64]);
    let (x, y) = (b.argument(f, 0), b.result(f, 0));
    b.dispatch(f, first, [1, 1, 1], &[], &[x, x, y]);
    b.dispatch(f, second, [1, 1, 1], &[], &[y, y, y]);
    let path = module_file(&scratch("twice"), &b.finish().expect("builds").bytes);
    let source = Embed::new(&path)
        .arena_bytes(0)
        .builtin_kernels()
        .generate()
        .expect("no arena needed");
    assert_eq!(
        source
            .matches("    ::hal_local::kernels::ADD_F32, //")
            .count(),
        2
    );
    assert_eq!(source.matches("    assert!(same_name(").count(), 1);
    assert!(source.contains("pub const ARENA_BYTES: u64 = 0;"));
    assert!(source.contains("constants: ::hal_core::module::Seq::from_encoded(0, &[]),"));
}

#[test]
fn a_module_without_executables_links_nothing() {
    let mut b = ModuleBuilder::new("zeros");
    let f = b.function("zeros", &[], &[64]);
    let y = b.result(f, 0);
    b.fill(f, y, 0);
    let path = module_file(
        &scratch("no_executables"),
        &b.finish().expect("builds").bytes,
    );
    let source = Embed::new(&path)
        .arena_bytes(0)
        .generate()
        .expect("nothing to link");
    assert!(source.contains("pub static KERNELS: [::hal_local::kernel::Kernel; 0] = [\n];"));
    assert!(source.contains("executables: ::hal_core::module::Seq::from_encoded(0, &[]),"));
    assert!(!source.contains("same_name"));
}

#[test]
fn files_that_are_not_modules_are_refused() {
    let dir = scratch("not_modules");
    let missing = dir.join("missing.ember");
    let err = Embed::new(&missing)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect_err("no file");
    assert!(matches!(err, EmbedError::Read { .. }));
    let prefix = format!("module {}: cannot read the file: ", missing.display());
    assert!(err.to_string().starts_with(&prefix), "{err}");

    let short = module_file(&dir, b"not a module");
    let err = Embed::new(&short)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect_err("truncated");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: not a valid Ember module: preamble: truncated: needs 16 bytes, has 12",
            short.display()
        )
    );

    let mut bytes = digits(false);
    bytes[0] = b'X';
    let bad = module_file(&dir, &bytes);
    let err = Embed::new(&bad)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect_err("bad magic");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: not a valid Ember module: preamble: bad magic (not an Ember module)",
            bad.display()
        )
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn configuration_mistakes_are_refused() {
    let path = module_file(&scratch("configuration"), &digits(false));
    let err = Embed::new(&path)
        .builtin_kernels()
        .generate()
        .expect_err("no arena");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: no arena size given; call `Embed::arena_bytes` with the board's arena \
             (its `LocalConfig::transient_bytes`)",
            path.display()
        )
    );

    let err = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .kernels(&[("conv2d_f32", "kernels::conv2d f32")])
        .generate()
        .expect_err("not a path");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: kernel `conv2d_f32` is linked as `kernels::conv2d f32`, which is not a \
             Rust path (like `crate::kernels::CONV2D_F32`)",
            path.display()
        )
    );
}

#[test]
fn write_to_includes_a_copy_of_the_module() {
    let dir = scratch("write_to");
    let bytes = digits(false);
    let path = module_file(&dir, &bytes);
    let embed = Embed::new(&path).arena_bytes(4096).builtin_kernels();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out");
    let written = embed.write_to(&out, "digits.rs").expect("fits");
    assert_eq!(written, out.join("digits.rs"));
    let copy = std::path::absolute(out.join("digits.rs.bin")).expect("absolute");
    assert_eq!(std::fs::read(&copy).expect("copy"), bytes);
    let source = std::fs::read_to_string(&written).expect("source");
    let include = format!(
        "pub static MODULE_BYTES: ModuleBytes = ModuleBytes(*include_bytes!({:?}));",
        copy.to_str().expect("UTF-8")
    );
    assert!(source.contains(&include), "{source}");
    // Apart from how the bytes are held, the same source as `generate`.
    let generated = embed.generate().expect("fits");
    let tail = |s: &str| s[s.find("pub const MODULE_NAME").expect("name")..].to_owned();
    assert_eq!(tail(&source), tail(&generated));

    // Refused modules write nothing.
    let too_big = Embed::new(&path).arena_bytes(64).builtin_kernels();
    assert!(too_big.write_to(&out, "too_big.rs").is_err());
    assert!(!out.join("too_big.rs").exists());
    assert!(!out.join("too_big.rs.bin").exists());
}

#[test]
fn write_to_out_dir_needs_a_build_script() {
    if std::env::var_os("OUT_DIR").is_some() {
        return; // Not the case this checks.
    }
    let path = module_file(&scratch("no_out_dir"), &digits(false));
    let err = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .write_to_out_dir("digits.rs")
        .expect_err("OUT_DIR is not set");
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: OUT_DIR is not set; `Embed::write_to_out_dir` and `Embed::build_rs` run \
             in a build script",
            path.display()
        )
    );
}

/// The reference models, found where the project's tests find them.
fn models_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("EMBER_MODELS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models")
        });
    dir.is_dir().then_some(dir)
}

/// A `.tflite` model is imported at build time: its module names the TFLite kernels, and a
/// plan that does not fit the board's arena fails naming the model.
#[test]
fn a_tflite_model_embeds_directly() {
    let Some(models) = models_dir() else {
        eprintln!("\n*** SKIPPED: no reference models (set EMBER_MODELS) ***\n");
        return;
    };
    let model = models.join("tflm/hello_world_int8.tflite");
    let source = Embed::new(&model)
        .arena_bytes(1024)
        .tflite_kernels()
        .generate()
        .expect("hello_world embeds");
    assert!(source.contains("::hal_local::kernels::tflite::FULLY_CONNECTED_S8"));
    let person = models.join("tflm/person_detect.tflite");
    let err = Embed::new(&person)
        .arena_bytes(1024)
        .tflite_kernels()
        .generate()
        .expect_err("person_detect needs more than 1 KiB");
    let message = err.to_string();
    assert!(message.contains("person_detect.tflite"), "{message}");
    assert!(message.contains("55296"), "{message}");
    let garbage = std::env::temp_dir().join("ember-build-garbage.tflite");
    std::fs::write(&garbage, b"not a model at all, just bytes").unwrap();
    let err = Embed::new(&garbage)
        .arena_bytes(1024)
        .tflite_kernels()
        .generate()
        .expect_err("garbage is refused");
    assert!(matches!(err, EmbedError::Import { .. }), "{err}");
}

/// A `.tflite` model is lowered for the target: OHWI int8 convolution filters on a
/// Cortex-M4 (`thumbv7em`), the host's HWIO elsewhere; barriers between steps on a host (a
/// GPU may run it), none on bare-metal targets.
#[test]
fn a_tflite_model_is_lowered_for_the_target() {
    let Some(models) = models_dir() else {
        eprintln!("\n*** SKIPPED: no reference models (set EMBER_MODELS) ***\n");
        return;
    };
    let person = models.join("tflm/person_detect.tflite");
    let embed = |target: &str| {
        Embed::new(&person)
            .arena_bytes(1 << 20)
            .tflite_kernels()
            .target(target)
            .generate()
            .expect("person_detect embeds")
    };
    let host = embed("x86_64-unknown-linux-gnu");
    let m3 = embed("thumbv7m-none-eabi");
    assert_eq!(m3, embed("riscv32imac-unknown-none-elf"));
    assert_ne!(host, m3);
    let m4 = embed("thumbv7em-none-eabihf");
    assert_ne!(m3, m4);
}
