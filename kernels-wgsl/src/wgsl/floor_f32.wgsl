// floor_f32: ember-kernels' `FloorF32` (TFLM's float FLOOR). unary_f32.wgsl holds the
// bindings and the loop.

fn apply(x: f32) -> f32 {
    return floor(x);
}
