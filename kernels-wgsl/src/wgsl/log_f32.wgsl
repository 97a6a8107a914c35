// log_f32: ember-kernels' `LogF32` (TFLM's float LOG, `logf`) with the device's `log`
// (Vulkan allows 3 ulp outside [0.5, 2] and 2^-21 absolute inside). unary_f32.wgsl holds
// the bindings and the loop.

fn apply(x: f32) -> f32 {
    return log(x);
}
