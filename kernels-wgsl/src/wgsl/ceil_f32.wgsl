// ceil_f32: ember-kernels' `CeilF32` (TFLM's float CEIL). unary_f32.wgsl holds the
// bindings and the loop.

fn apply(x: f32) -> f32 {
    return ceil(x);
}
