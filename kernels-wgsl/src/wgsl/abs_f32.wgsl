// abs_f32: ember-kernels' `AbsF32` (TFLM's float ABS, `std::abs`). unary_f32.wgsl holds the
// bindings and the loop.

fn apply(x: f32) -> f32 {
    return abs(x);
}
