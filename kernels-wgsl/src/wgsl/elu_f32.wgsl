// elu_f32: ember-kernels' `EluF32` (TFLM's float ELU: `expm1(x)` below zero, else `x`), as
// hal-local's `exp_f32(x) - 1` (within 2^-23 absolute of `expm1`). unary_f32.wgsl holds
// the bindings and the loop.

fn apply(x: f32) -> f32 {
    if x < 0.0 {
        return exp_f32(x) - 1.0;
    }
    return x;
}
