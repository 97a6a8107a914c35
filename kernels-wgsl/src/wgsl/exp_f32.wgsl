// exp_f32: ember-kernels' `ExpF32` (TFLM's float EXP, `expf`) with hal-local's `exp_f32`
// (exp.wgsl, appended to every kernel), the same bits on every device. unary_f32.wgsl
// holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return exp_f32(x);
}
