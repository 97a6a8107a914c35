// l2_pool2d_f32: ember-kernels' `L2Pool2dF32` (TFLM's reference `L2Pool`). pool_f32.wgsl
// holds the bindings and the loop.
//
// Parameter words: 0..=11 the window (pool_window.wgsl), 12 act_min bits, 13 act_max bits.

// Output `e`: the squares of the window's cells inside the input summed from 0 in row-major
// order, divided by their count (correctly rounded), the device's square root of that,
// clamped.
fn element(e: u32) -> f32 {
    let w = window_of(e);
    // Decode refused windows that miss the input, so `count >= 1`.
    let count = max(w.fy1 - w.fy0, 0) * max(w.fx1 - w.fx0, 0);
    var acc = 0.0f;
    for (var fy = w.fy0; fy < w.fy1; fy++) {
        for (var fx = w.fx0; fx < w.fx1; fx++) {
            let value = cell(w, fy, fx);
            acc += value * value;
        }
    }
    let mean = div_rn(acc, f32(count));
    return clamp_f32(sqrt(mean), bitcast<f32>(param(12u)), bitcast<f32>(param(13u)));
}
