//! Patch-based stages in the static program: a chain of float convolutions (a strided
//! first layer with padding above, a depthwise layer, a pointwise one, a strided depthwise
//! one, odd sizes throughout) planned whole and patch by patch. The patched program needs
//! a smaller arena, computes no row twice, and gives the same bits on random inputs; the
//! build picks it where the plain program does not fit the board, and fails with the bytes
//! needed and available where neither does.

use ember_build::program::{plan_program, plan_program_with, Patches, PlannedStep};
use ember_build::{Embed, EmbedError};
use ember_kernels::conv2d::{Conv2dF32, Conv2dShape};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dF32, DepthwiseConv2dShape};
use ember_kernels::padding::{compute_padding_height_width, Padding, Window};
use ember_kernels::KernelParams;
use hal_core::module::{Module, ModuleBuilder};
use std::path::{Path, PathBuf};

/// A deterministic stream of floats in [-1, 1).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn bytes(&mut self, floats: usize) -> Vec<u8> {
        (0..floats)
            .flat_map(|_| self.next().to_le_bytes())
            .collect()
    }
}

/// The window of a `SAME` layer over `height × width`, and its output size.
fn same(height: usize, width: usize, filter: usize, stride: usize) -> (Window, usize, usize) {
    let s = stride as i32;
    let f = filter as i32;
    let p =
        compute_padding_height_width(s, s, 1, 1, height as i32, width as i32, f, f, Padding::Same);
    let window = Window {
        stride_height: stride,
        stride_width: stride,
        dilation_height: 1,
        dilation_width: 1,
        pad_height: p.height as usize,
        pad_width: p.width as usize,
    };
    (window, p.out_height as usize, p.out_width as usize)
}

/// 23×19×1 → conv 3×3 stride 2 (one row of padding above) → 12×10×16 → depthwise 3×3 →
/// 12×10×16 → conv 1×1 → 12×10×16 → depthwise 3×3 stride 2 → 6×5×16, float, random
/// weights and biases.
fn chain() -> Vec<u8> {
    let mut noise = Noise(7);
    let mut b = ModuleBuilder::new("chain");
    let conv = b.executable(Conv2dF32::KERNEL);
    let depthwise = b.executable(DepthwiseConv2dF32::KERNEL);
    let (height, width, depth) = (23, 19, 16);
    let (w0, h1, w1) = same(height, width, 3, 2);
    let (w1_window, _, _) = same(h1, w1, 3, 1);
    let (w3, h3, w3_width) = same(h1, w1, 3, 2);
    let f = b.function(
        "infer",
        &[(height * width * 4) as u64],
        &[(h3 * w3_width * depth * 4) as u64],
    );
    let (input, output) = (b.argument(f, 0), b.result(f, 0));
    let activation = (h1 * w1 * depth * 4) as u64;
    let (t0, t1, t2) = (
        b.transient(f, activation),
        b.transient(f, activation),
        b.transient(f, activation),
    );
    let conv_params = |ih, iw, id, k, window, oh, ow| Conv2dF32 {
        shape: Conv2dShape {
            batches: 1,
            input_height: ih,
            input_width: iw,
            input_depth: id,
            filter_height: k,
            filter_width: k,
            filter_depth: id,
            output_height: oh,
            output_width: ow,
            output_depth: depth,
            window,
            has_bias: true,
        },
        filter_hwio: false,
        act_min: -0.75,
        act_max: f32::MAX,
    };
    let depthwise_params = |window, oh, ow| DepthwiseConv2dF32 {
        shape: DepthwiseConv2dShape {
            batches: 1,
            input_height: h1,
            input_width: w1,
            input_depth: depth,
            depth_multiplier: 1,
            filter_height: 3,
            filter_width: 3,
            output_height: oh,
            output_width: ow,
            window,
            has_bias: true,
        },
        act_min: f32::MIN,
        act_max: 6.0,
    };
    let pointwise = Window {
        pad_height: 0,
        pad_width: 0,
        ..w1_window
    };
    let mut layer = |b: &mut ModuleBuilder, kernel, words: Vec<u32>, taps, from, to| {
        let filter = b.constant("filter", &noise.bytes(taps * depth));
        let bias = b.constant("bias", &noise.bytes(depth));
        b.dispatch(f, kernel, [1, 1, 1], &words, &[from, filter, bias, to]);
    };
    let words = |params: &dyn Fn(&mut Vec<u32>)| {
        let mut words = Vec::new();
        params(&mut words);
        words
    };
    let l0 = conv_params(height, width, 1, 3, w0, h1, w1);
    let l1 = depthwise_params(w1_window, h1, w1);
    let l2 = conv_params(h1, w1, depth, 1, pointwise, h1, w1);
    let l3 = depthwise_params(w3, h3, w3_width);
    layer(&mut b, conv, words(&|w| l0.encode(w)), 9, input, t0);
    layer(&mut b, depthwise, words(&|w| l1.encode(w)), 9, t0, t1);
    layer(&mut b, conv, words(&|w| l2.encode(w)), depth, t1, t2);
    layer(&mut b, depthwise, words(&|w| l3.encode(w)), 9, t2, output);
    b.finish().expect("the module builds").bytes
}

/// `bytes` written to a fresh scratch file for `test`.
fn module_file(test: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ember-build-patches")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("chain.ember");
    std::fs::write(&path, bytes).expect("write module");
    path
}

#[test]
fn a_patched_chain_needs_less_arena_and_gives_the_same_bits() {
    let bytes = chain();
    let module = Module::parse(&bytes).expect("valid");
    let plain = plan_program(&module, None).expect("a program");
    let patched = plan_program_with(&module, None, Patches::Smallest).expect("a program");
    assert!(plain.patches.is_empty());
    assert!(!patched.patches.is_empty(), "no stage chosen");
    assert!(
        patched.arena_bytes < plain.arena_bytes,
        "patched {} B, plain {} B",
        patched.arena_bytes,
        plain.arena_bytes
    );
    for stage in &patched.patches {
        eprintln!("{stage}");
        assert_eq!(stage.extra_multiply_adds, 0, "a row computed twice");
        assert_eq!(stage.plain_arena_bytes, plain.arena_bytes);
        assert!(stage.bands > 1);
    }
    assert_eq!(
        patched.patches.last().map(|s| s.arena_bytes),
        Some(patched.arena_bytes)
    );
    // More steps than layers: each layer runs once per band, with moves between.
    assert!(patched.steps.len() > plain.steps.len());
    assert!(patched
        .steps
        .iter()
        .any(|step| matches!(step, PlannedStep::Copy { .. })));
    let kernels = plain.local_kernels().expect("hal-local's kernels");
    let mut noise = Noise(11);
    for _ in 0..4 {
        let input = noise.bytes(23 * 19);
        let whole = plain.run(&kernels, module.pool(), &[&input]).expect("runs");
        let banded = patched
            .run(&kernels, module.pool(), &[&input])
            .expect("runs");
        assert_eq!(whole, banded);
        assert!(whole[0].iter().any(|&b| b != 0));
    }
}

#[test]
fn the_build_runs_patches_where_the_plain_program_does_not_fit() {
    let bytes = chain();
    let module = Module::parse(&bytes).expect("valid");
    let plain = plan_program(&module, None).expect("a program").arena_bytes;
    let patched = plan_program_with(&module, None, Patches::Smallest)
        .expect("a program")
        .arena_bytes;
    let path = module_file("fit", &bytes);
    let embed = |available: u64| {
        Embed::new(&path)
            .arena_bytes(available)
            .tflite_kernels()
            .program()
    };
    // Room for the plain program: no patches.
    let source = embed(plain).generate().expect("fits");
    assert!(source.contains(&format!("PROGRAM_ARENA_BYTES: usize = {plain};")));
    assert!(!source.contains("patch-based stage"));
    // Asked for, they are used anyway.
    let source = embed(plain).patches().generate().expect("fits");
    assert!(source.contains(&format!("PROGRAM_ARENA_BYTES: usize = {patched};")));
    assert!(source.contains("/// A patch-based stage of"), "{source}");
    // One byte short of the plain program: patches, chosen by the build.
    let source = embed(plain - 1).generate().expect("fits with patches");
    assert!(source.contains(&format!("PROGRAM_ARENA_BYTES: usize = {patched};")));
    // One byte short of the patched program: the bytes needed and available.
    let err = embed(patched - 1).generate().expect_err("fits no way");
    assert!(
        matches!(err, EmbedError::ArenaTooSmall { needed, available, whole: Some(whole), .. }
            if needed == patched && available == patched - 1 && whole == plain),
        "{err:?}"
    );
    assert!(err.to_string().ends_with(&format!(
        "needs a {patched}-byte arena; the board gives {} (with patch-based stages; {plain} \
         with every layer whole)",
        patched - 1
    )));
}
