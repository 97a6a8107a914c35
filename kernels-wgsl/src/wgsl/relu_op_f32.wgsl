// relu_op_f32: ember-kernels' `ReluF32` (TFLM's float RELU: `x < 0 ? 0 : x`, so `-0.0` and
// NaN pass). unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return select(x, 0.0, x < 0.0);
}
