// round_f32: ember-kernels' `RoundF32` (TFLM's float ROUND, `RoundToNearest`: halves to
// even, as WGSL's `round`). unary_f32.wgsl holds the bindings and the loop.

fn apply(x: f32) -> f32 {
    return round(x);
}
