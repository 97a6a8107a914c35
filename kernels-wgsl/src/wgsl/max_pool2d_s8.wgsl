// max_pool2d_s8: ember-kernels' `MaxPool2dS8` (TFLM's reference_integer_ops `MaxPool`).
// each_byte_s8.wgsl runs the loop over output words.
//
// Parameter words: 0..=11 the window (pool_window.wgsl), 12 act_min, 13 act_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return pool_outputs();
}

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// Output `e`: the largest of the window's cells inside the input (-128 where none is),
// clamped.
fn element(e: u32) -> i32 {
    let w = window_of(e);
    var m = -128;
    for (var fy = w.fy0; fy < w.fy1; fy++) {
        for (var fx = w.fx0; fx < w.fx1; fx++) {
            m = max(m, input_s8(cell_index(w, fy, fx)));
        }
    }
    return clamp_s8(m, param_i32(12u), param_i32(13u));
}
