// logistic_f32: ember-kernels' `LogisticF32` (TFLM's reference `Logistic<float>`): 1 above
// 16.619047, `exp(x)` below -9, else `1 / (1 + exp(-x))`, with the device's `exp` (Vulkan
// allows 3 + 2|x| ulp). unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    var y = 1.0 / (1.0 + exp(-x));
    if x > 16.619047 {
        y = 1.0;
    } else if x < -9.0 {
        y = exp(x);
    }
    return y;
}
