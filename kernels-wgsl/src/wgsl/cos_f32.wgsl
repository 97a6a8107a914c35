// cos_f32: ember-kernels' `CosF32` (TFLM's float COS, `cosf`) with trig_f32.wgsl's `cos_f32`
// (the device's `cos` is only held to 2^-11 absolute). unary_f32.wgsl holds the bindings
// and the loop.

fn apply(x: f32) -> f32 {
    return cos_f32(x);
}
