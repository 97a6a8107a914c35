// sin_f32: ember-kernels' `SinF32` (TFLM's float SIN, `sinf`) with trig_f32.wgsl's `sin_f32`
// (the device's `sin` is only held to 2^-11 absolute). unary_f32.wgsl holds the bindings
// and the loop.

fn apply(x: f32) -> f32 {
    return sin_f32(x);
}
