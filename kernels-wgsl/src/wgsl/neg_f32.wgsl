// neg_f32: ember-kernels' `NegF32` (TFLM's float NEG). unary_f32.wgsl holds the bindings
// and the loop.

fn apply(x: f32) -> f32 {
    return -x;
}
