// average_pool2d_f32: ember-kernels' `AveragePool2dF32` (TFLM's reference
// `AveragePool<float>`). Each invocation computes whole output elements: the window's cells
// inside the input summed from 0 in row-major order, divided by their count, clamped.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 depth, 4 output_height,
// 5 output_width, 6 filter_height, 7 filter_width, 8 stride_height, 9 stride_width,
// 10 pad_height, 11 pad_width, 12 act_min bits, 13 act_max bits.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

// Output `e` of `[batches, output_height, output_width, depth]`.
fn element(e: u32) -> f32 {
    let ih = i32(param(1u));
    let iw = i32(param(2u));
    let d = param(3u);
    let oh = param(4u);
    let ow = param(5u);
    let c = e % d;
    let pixel = e / d;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let y0 = i32(oy * param(8u)) - i32(param(10u));
    let x0 = i32(ox * param(9u)) - i32(param(11u));
    let fy0 = max(-y0, 0);
    let fy1 = min(i32(param(6u)), ih - y0);
    let fx0 = max(-x0, 0);
    let fx1 = min(i32(param(7u)), iw - x0);
    // Decode refused windows that miss the input, so `count >= 1`.
    let count = max(fy1 - fy0, 0) * max(fx1 - fx0, 0);
    let in0 = base_byte(0u) / 4u;
    var acc = 0.0f;
    for (var fy = fy0; fy < fy1; fy++) {
        let row = (b * u32(ih) + u32(y0 + fy)) * u32(iw);
        for (var fx = fx0; fx < fx1; fx++) {
            acc += input[in0 + (row + u32(x0 + fx)) * d + c];
        }
    }
    return clamp_f32(div_rn(acc, f32(count)), bitcast<f32>(param(12u)), bitcast<f32>(param(13u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(4u) * param(5u) * param(3u);
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
