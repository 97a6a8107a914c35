// max_pool2d_f32: ember-kernels' `MaxPool2dF32` (TFLM's reference `MaxPool<float>`).
// pool_f32.wgsl holds the bindings and the loop.
//
// Parameter words: 0..=11 the window (pool_window.wgsl), 12 act_min bits, 13 act_max bits.

// Output `e`: from `f32::MIN`, each window cell inside the input replaces the maximum where
// the maximum is below it (NaN cells are skipped), then the clamp.
fn element(e: u32) -> f32 {
    let w = window_of(e);
    // f32::MIN.
    var m = bitcast<f32>(0xff7fffffu);
    for (var fy = w.fy0; fy < w.fy1; fy++) {
        for (var fx = w.fx0; fx < w.fx1; fx++) {
            let v = cell(w, fy, fx);
            m = select(m, v, m < v);
        }
    }
    return clamp_f32(m, bitcast<f32>(param(12u)), bitcast<f32>(param(13u)));
}
