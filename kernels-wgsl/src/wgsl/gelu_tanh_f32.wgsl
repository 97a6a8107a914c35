// gelu_tanh_f32: ember-kernels' `GeluTanhF32` (TFLite's float GELU with `approximate`:
// `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`, in that order), tanh as
// tanh.wgsl's `tanh_of`. unary_f32.wgsl holds the bindings and the loop.

// sqrt(2/pi) rounded to f32, as TFLite's `kSqrt2dPi`.
const SQRT_2_OVER_PI: f32 = 0x1.988454p-1f;

fn apply(x: f32) -> f32 {
    let inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh_of(inner));
}
