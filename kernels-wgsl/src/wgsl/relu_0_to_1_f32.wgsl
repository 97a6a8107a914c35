// relu_0_to_1_f32: ember-kernels' `Relu0To1F32` (TFLite's float RELU_0_TO_1:
// `x > 1 ? 1 : x < 0 ? 0 : x`). unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return select(select(x, 0.0, x < 0.0), 1.0, x > 1.0);
}
