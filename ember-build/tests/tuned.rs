//! The kernel variant chosen at build time: for a static program built for a core with
//! tuned kernels (Armv7E-M's DSP extension; the register-blocked ones of the Cortex-M3,
//! RV32 and AArch64), `KERNELS` names hal-local's tuned kernel alone for an executable
//! every dispatch of which that core's kernel takes — so the portable loops are not
//! linked — and the full kernel otherwise (a core without tuned kernels, or a dispatch the
//! tuned kernel does not take).

use ember_build::Embed;
use ember_kernels::conv2d::{Conv2dS8, Conv2dShape};
use ember_kernels::padding::Window;
use ember_kernels::KernelParams;
use hal_core::module::ModuleBuilder;
use std::path::{Path, PathBuf};

/// A 1×1 int8 convolution over 4×4×4, its filter OHWI or (`hwio`) HWIO, its channels'
/// multipliers `multiplier`.
fn conv(hwio: bool, multiplier: i32) -> Vec<u8> {
    let params = Conv2dS8 {
        shape: Conv2dShape {
            batches: 1,
            input_height: 4,
            input_width: 4,
            input_depth: 4,
            filter_height: 1,
            filter_width: 1,
            filter_depth: 4,
            output_height: 4,
            output_width: 4,
            output_depth: 4,
            window: Window {
                stride_height: 1,
                stride_width: 1,
                dilation_height: 1,
                dilation_width: 1,
                pad_height: 0,
                pad_width: 0,
            },
            has_bias: true,
        },
        filter_hwio: hwio,
        input_offset: 5,
        output_offset: -3,
        act_min: -128,
        act_max: 127,
    };
    let mut words = Vec::new();
    params.encode(&mut words);
    let mut b = ModuleBuilder::new("conv");
    let kernel = b.executable(Conv2dS8::KERNEL);
    let words32 =
        |values: [i32; 4]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let filter = b.constant("filter", &[1; 16]);
    let bias = b.constant("bias", &words32([1, 2, 3, 4]));
    let multipliers = b.constant("multipliers", &words32([1 << 30, multiplier, 1 << 30, 1]));
    let shifts = b.constant("shifts", &words32([0; 4]));
    let f = b.function("infer", &[64], &[64]);
    let (x, y) = (b.argument(f, 0), b.result(f, 0));
    b.dispatch(
        f,
        kernel,
        [1, 1, 1],
        &words,
        &[x, filter, bias, multipliers, shifts, y],
    );
    b.finish().expect("the module builds").bytes
}

fn module_file(test: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ember-build-tuned")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("conv.ember");
    std::fs::write(&path, bytes).expect("write module");
    path
}

fn kernels_line(path: &Path, target: &str, program: bool) -> String {
    let embed = Embed::new(path)
        .arena_bytes(4096)
        .tflite_kernels()
        .target(target);
    let embed = if program { embed.program() } else { embed };
    let source = embed.generate().expect("fits");
    source
        .lines()
        .find(|line| line.contains("// executable 0"))
        .expect("the KERNELS table")
        .to_owned()
}

#[test]
fn a_dsp_program_links_the_tuned_kernel_alone() {
    let path = module_file("ohwi", &conv(false, 1 << 30));
    let m4 = kernels_line(&path, "thumbv7em-none-eabihf", true);
    assert!(
        m4.contains("::hal_local::kernels::tflite::CONV2D_S8_TUNED"),
        "{m4}"
    );
    // An OHWI filter on a register-blocked core (which reads HWIO ones), or no static
    // program: the full kernel.
    for line in [
        kernels_line(&path, "riscv32imac-unknown-none-elf", true),
        kernels_line(&path, "thumbv7em-none-eabihf", false),
    ] {
        assert!(
            line.contains("::hal_local::kernels::tflite::CONV2D_S8,"),
            "{line}"
        );
    }
}

#[test]
fn a_blocked_program_links_the_tuned_kernel_alone() {
    let path = module_file("blocked", &conv(true, 1 << 30));
    for target in [
        "thumbv7m-none-eabi",
        "riscv32imac-unknown-none-elf",
        "aarch64-unknown-none",
    ] {
        let line = kernels_line(&path, target, true);
        assert!(
            line.contains("::hal_local::kernels::tflite::CONV2D_S8_TUNED"),
            "{target}: {line}"
        );
    }
    // A core without tuned kernels: the full kernel.
    let host = kernels_line(&path, "x86_64-unknown-linux-gnu", true);
    assert!(
        host.contains("::hal_local::kernels::tflite::CONV2D_S8,"),
        "{host}"
    );
}

#[test]
fn a_dispatch_the_tuned_kernel_does_not_take_keeps_the_full_kernel() {
    // An HWIO filter (the parameters), or a negative multiplier (the output stage).
    for (test, module) in [
        ("hwio", conv(true, 1 << 30)),
        ("multiplier", conv(false, i32::MIN)),
    ] {
        let path = module_file(test, &module);
        let line = kernels_line(&path, "thumbv7em-none-eabihf", true);
        assert!(
            line.contains("::hal_local::kernels::tflite::CONV2D_S8,"),
            "{test}: {line}"
        );
    }
}
