//! `Embed::program`: a module's function as a static program — the plan that puts inputs
//! and outputs inside the one arena, the source it generates, the run at build time, and
//! the build error for a dispatch its kernel refuses.

use ember_build::program::{plan_program, PlannedStep};
use ember_build::{Embed, EmbedError};
use hal_core::module::{Module, ModuleBuilder};
use hal_local::program::Span;
use std::path::{Path, PathBuf};

/// `bytes` written to a fresh scratch file for `test`.
fn module_file(test: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ember-build-program")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("mlp.ember");
    std::fs::write(&path, bytes).expect("write module");
    path
}

/// 16 inputs → 400 hidden (ReLU in place) → 16 → softmax over `softmax_cols` columns: the
/// hidden layer (1600 B) lives with the input at step 0 and with the logits at step 2; the
/// logits and the output at step 3. Zero weights.
fn mlp(softmax_cols: u32) -> Vec<u8> {
    let mut b = ModuleBuilder::new("mlp");
    let matmul = b.executable("matmul_f32");
    let relu = b.executable("relu_f32");
    let softmax = b.executable("softmax_f32");
    let w1 = b.constant("w1", &vec![0; 16 * 400 * 4]);
    let w2 = b.constant("w2", &vec![0; 400 * 16 * 4]);
    let f = b.function("infer", &[16 * 4], &[16 * 4]);
    let (x, y) = (b.argument(f, 0), b.result(f, 0));
    let h = b.transient(f, 400 * 4);
    let o = b.transient(f, 16 * 4);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 16, 400], &[x, w1, h]);
    b.dispatch(f, relu, [1, 1, 1], &[], &[h, h]);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 400, 16], &[h, w2, o]);
    b.dispatch(f, softmax, [1, 1, 1], &[1, softmax_cols], &[o, y]);
    b.finish().expect("the module builds").bytes
}

#[test]
fn inputs_and_outputs_share_the_one_arena() {
    let bytes = mlp(16);
    let module = Module::parse(&bytes).expect("valid");
    let plan = plan_program(&module, None).expect("a program");
    assert_eq!(plan.function, "infer");
    // The module's own plan: 1664 B of arena, and the input and output apart (64 B each).
    assert_eq!(plan.separate_bytes, 1664 + 128);
    // Inside one arena the input and output reuse bytes the hidden layer does not hold.
    assert_eq!(plan.arena_bytes, 1664);
    let [input] = plan.inputs[..] else {
        panic!("one input")
    };
    let [output] = plan.outputs[..] else {
        panic!("one output")
    };
    let binding = |step: usize, n: usize| match &plan.steps[step] {
        PlannedStep::Dispatch { bindings, .. } => bindings[n],
        other => panic!("{other:?}"),
    };
    // Values live at the same step never share a byte: the input and the hidden layer at
    // step 0, the logits and the output at step 3.
    let (hidden, logits) = (binding(0, 2), binding(3, 0));
    assert_eq!((binding(0, 0), binding(3, 1)), (input, output));
    for (a, b) in [(input, hidden), (output, logits)] {
        assert!(a.range().end <= b.range().start || b.range().end <= a.range().start);
    }
    // w1 is the pool's first constant; w2 starts on the next 64-byte boundary after it.
    match &plan.steps[2] {
        PlannedStep::Dispatch { bindings, .. } => {
            assert_eq!(bindings[1], Span::pool(16 * 400 * 4, 400 * 16 * 4));
        }
        other => panic!("{other:?}"),
    }
    // Run on the host: zero weights give zero logits, so a uniform softmax.
    let kernels = plan.local_kernels().expect("built-in kernels");
    let outputs = plan
        .run(&kernels, module.pool(), &[&[0; 64]])
        .expect("runs");
    let probabilities: Vec<f32> = outputs[0]
        .chunks_exact(4)
        .map(|w| f32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(probabilities, vec![1.0 / 16.0; 16]);
}

#[test]
fn the_generated_source_holds_the_program() {
    let path = module_file("source", &mlp(16));
    let source = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .program()
        .generate()
        .expect("fits");
    for expected in [
        "pub const PROGRAM_ARENA_BYTES: usize = 1664;",
        "pub static PROGRAM: [::hal_local::program::Step<'static>; 4] = {",
        "Step::Dispatch { executable: 1, workgroups: [1, 1, 1], constants: &[], bindings: &[S::arena(",
        "pub const PROGRAM_INPUTS: [::hal_local::program::Span; 1] =",
        "pub const PROGRAM_OUTPUTS: [::hal_local::program::Span; 1] =",
        "pub static POOL: PoolBytes = PoolBytes([",
    ] {
        assert!(source.contains(expected), "missing {expected:?} in:\n{source}");
    }
    // Without `program`, none of it.
    let plain = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect("fits");
    assert!(!plain.contains("PROGRAM"));
}

#[test]
fn a_dispatch_its_kernel_refuses_fails_the_build() {
    // A softmax over 32 columns of a 16-float tensor.
    let path = module_file("refused", &mlp(32));
    let err = Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .program()
        .generate()
        .expect_err("refused");
    assert!(
        matches!(err, EmbedError::Refused { step: 3, ref kernel, .. } if kernel == "softmax_f32"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "module {}: step 3 of the static program, kernel `softmax_f32`, is refused: \
             binding 0 holds 64 bytes, kernel needs 128",
            path.display()
        )
    );
    // The module alone is fine: the HAL path would refuse it only at run time.
    Embed::new(&path)
        .arena_bytes(4096)
        .builtin_kernels()
        .generate()
        .expect("no program, no run");
}

#[test]
fn the_program_s_arena_must_fit_the_board() {
    let path = module_file("too_big", &mlp(16));
    let err = Embed::new(&path)
        .arena_bytes(1663)
        .builtin_kernels()
        .program()
        .generate()
        .expect_err("one byte short");
    assert!(matches!(
        err,
        EmbedError::ArenaTooSmall {
            needed: 1664,
            available: 1663,
            ..
        }
    ));
}
