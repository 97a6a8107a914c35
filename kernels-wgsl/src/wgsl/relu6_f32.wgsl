// relu6_f32: ember-kernels' `Relu6F32` (TFLM's float RELU6: `x > 6 ? 6 : x < 0 ? 0 : x`).
// unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return select(select(x, 0.0, x < 0.0), 6.0, x > 6.0);
}
