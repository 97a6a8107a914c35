// square_f32: ember-kernels' `SquareF32` (TFLM's float SQUARE, `x * x`). unary_f32.wgsl
// holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return x * x;
}
