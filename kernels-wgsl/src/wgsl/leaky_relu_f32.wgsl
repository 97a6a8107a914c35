// leaky_relu_f32: ember-kernels' `LeakyReluF32` (TFLM's float LEAKY_RELU: `x > 0 ? x : x *
// alpha`). unary_f32.wgsl holds the bindings and the loop.
//
// Parameter words: 0 len, 1 alpha bits.

fn apply(x: f32) -> f32 {
    return select(x * bitcast<f32>(param(1u)), x, x > 0.0);
}
