//! The digits MLP as an Ember module description (packed by `ember-pack`).
//!
//! Function `classify`: argument `image` (64 `f32` features), result `probabilities`
//! (10 `f32`). Steps: `hidden = relu(image·w1 + b1)`, barrier, `logits = hidden·w2 + b2`,
//! barrier, `probabilities = softmax(logits)` — three dispatches of the built-in
//! `matmul_f32` and `softmax_f32` kernels; `hidden` and `logits` are transients the planner
//! places in one arena. [`description_for_gpu`] is the same function as one dispatch of
//! `mlp_softmax_f32`, bit for bit the same results.

use crate::mlp::{Mlp, HIDDEN, INPUTS, OUTPUTS};
use ember_pack::{
    Constant, ConstantData, Description, Dispatch, Executable, Function, Operand, Step, Value,
};

/// The function callers invoke.
pub const FUNCTION: &str = "classify";

/// matmul_f32 flags: add the bias row (bit 0), then ReLU (bit 1).
const BIAS: u32 = 1;
const RELU: u32 = 2;

fn value(name: &str, floats: usize) -> Value {
    Value {
        name: name.into(),
        bytes: (floats * 4) as u64,
    }
}

fn whole(name: &str) -> Operand {
    Operand::Whole(name.into())
}

fn constant(name: &str, data: &[f32]) -> Constant {
    Constant {
        name: name.into(),
        data: ConstantData::F32(data.to_vec()),
    }
}

/// The MLP's weights and biases as the module's constants `w1`, `b1`, `w2`, `b2`.
fn weights(mlp: &Mlp) -> Vec<Constant> {
    vec![
        constant("w1", &mlp.w1),
        constant("b1", &mlp.b1),
        constant("w2", &mlp.w2),
        constant("b2", &mlp.b2),
    ]
}

fn executable(name: &str, kernel: &str) -> Executable {
    Executable {
        name: name.into(),
        kernel: kernel.into(),
        spirv: None,
        entry: None,
    }
}

fn dispatch(executable: &str, constants: &[u32], bindings: &[&str]) -> Step {
    Step::Dispatch(Dispatch {
        executable: executable.into(),
        workgroups: [1, 1, 1],
        constants: constants.to_vec(),
        bindings: bindings.iter().map(|b| whole(b)).collect(),
    })
}

/// The module description for `mlp`, classifying one image per call.
pub fn description(mlp: &Mlp) -> Description {
    let (k, h, n) = (INPUTS as u32, HIDDEN as u32, OUTPUTS as u32);
    Description {
        name: "digits".into(),
        executables: vec![
            executable("matmul", "matmul_f32"),
            executable("softmax", "softmax_f32"),
        ],
        constants: weights(mlp),
        functions: vec![Function {
            name: FUNCTION.into(),
            arguments: vec![value("image", INPUTS)],
            results: vec![value("probabilities", OUTPUTS)],
            transients: vec![value("hidden", HIDDEN), value("logits", OUTPUTS)],
            steps: vec![
                dispatch(
                    "matmul",
                    &[1, k, h, BIAS | RELU],
                    &["image", "w1", "hidden", "b1"],
                ),
                Step::Barrier,
                dispatch(
                    "matmul",
                    &[1, h, n, BIAS],
                    &["hidden", "w2", "logits", "b2"],
                ),
                Step::Barrier,
                dispatch("softmax", &[1, n], &["logits", "probabilities"]),
            ],
        }],
    }
}

/// The module description for `mlp` as one `mlp_softmax_f32` dispatch: no transients and no
/// barriers. On a GPU every dispatch after a barrier costs microseconds of launch and a
/// chain of dependent loads, so the whole MLP runs in one; a CPU keeps [`description`], whose
/// `matmul_f32` is blocked for its caches and whose firmware build links only the kernels it
/// names.
pub fn description_for_gpu(mlp: &Mlp) -> Description {
    let (k, h, n) = (INPUTS as u32, HIDDEN as u32, OUTPUTS as u32);
    Description {
        name: "digits".into(),
        executables: vec![executable("mlp", "mlp_softmax_f32")],
        constants: weights(mlp),
        functions: vec![Function {
            name: FUNCTION.into(),
            arguments: vec![value("image", INPUTS)],
            results: vec![value("probabilities", OUTPUTS)],
            transients: vec![],
            steps: vec![dispatch(
                "mlp",
                &[1, k, h, n],
                &["image", "w1", "b1", "w2", "b2", "probabilities"],
            )],
        }],
    }
}
