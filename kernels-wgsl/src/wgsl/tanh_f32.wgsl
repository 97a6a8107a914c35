// tanh_f32: ember-kernels' `TanhF32` (`tanhf`), as tanh.wgsl's `tanh_of`. unary_f32.wgsl
// holds the bindings and the loop.
//
// Parameter words: 0 len.

fn apply(x: f32) -> f32 {
    return tanh_of(x);
}
