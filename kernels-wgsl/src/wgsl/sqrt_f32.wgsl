// sqrt_f32: ember-kernels' `SqrtF32` (TFLM's float SQRT) with the device's `sqrt`
// (Vulkan allows it the error of `inverseSqrt(x) * x`). unary_f32.wgsl holds the bindings
// and the loop.

fn apply(x: f32) -> f32 {
    return sqrt(x);
}
