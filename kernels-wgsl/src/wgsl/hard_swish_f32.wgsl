// hard_swish_f32: ember-kernels' `HardSwishF32` (TFLM's float HARD_SWISH: `x * min(6,
// max(0, x + 3)) / 6`, in that order). unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    let shifted = x + 3.0;
    let low = select(0.0, shifted, 0.0 < shifted);
    let gate = select(6.0, low, low < 6.0);
    return x * gate / 6.0;
}
