// conv2d_f32: ember-kernels' `Conv2dF32` (TFLM's reference `Conv<float>`), grouped
// convolution included. Each invocation computes whole output elements: the products summed
// from 0 in TFLM's order (filter rows, columns, then input channels; taps outside the input
// skipped), then the bias, then the clamp. An HWIO filter (`filter_hwio`, no groups) sums in
// the same order, only indexing the filter differently.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 filter_height, 5 filter_width, 6 filter_depth, 7 output_height, 8 output_width,
// 9 output_depth, 10 stride_height, 11 stride_width, 12 dilation_height, 13 dilation_width,
// 14 pad_height, 15 pad_width, 16 has_bias, 17 act_min bits, 18 act_max bits,
// 19 filter_hwio.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;

// Output `e` of `[batches, output_height, output_width, output_depth]`.
fn element(e: u32) -> f32 {
    let ih = i32(param(1u));
    let iw = i32(param(2u));
    let id = param(3u);
    let fh = param(4u);
    let fw = param(5u);
    let fd = param(6u);
    let oh = param(7u);
    let ow = param(8u);
    let od = param(9u);
    let dh = i32(param(12u));
    let dw = i32(param(13u));
    let hwio = param(19u) != 0u;
    let oc = e % od;
    let pixel = e / od;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let y0 = i32(oy * param(10u)) - i32(param(14u));
    let x0 = i32(ox * param(11u)) - i32(param(15u));
    let per_group = od / (id / fd);
    let channel0 = (oc / per_group) * fd;
    let in0 = base_byte(0u) / 4u;
    let f0 = base_byte(1u) / 4u;
    var total = 0.0f;
    for (var fy = 0u; fy < fh; fy++) {
        let y = y0 + dh * i32(fy);
        if y < 0 || y >= ih {
            continue;
        }
        let row = (b * u32(ih) + u32(y)) * u32(iw);
        for (var fx = 0u; fx < fw; fx++) {
            let x = x0 + dw * i32(fx);
            if x < 0 || x >= iw {
                continue;
            }
            let i = in0 + (row + u32(x)) * id + channel0;
            if hwio {
                // `[h, w, in, out]`: input channel `k` of this tap at `(taps + k) * od + oc`.
                let taps = (fy * fw + fx) * id;
                for (var k = 0u; k < fd; k++) {
                    total += input[i + k] * weights[f0 + (taps + k) * od + oc];
                }
            } else {
                let f = f0 + ((oc * fh + fy) * fw + fx) * fd;
                for (var k = 0u; k < fd; k++) {
                    total += input[i + k] * weights[f + k];
                }
            }
        }
    }
    var bv = 0.0f;
    if param(16u) != 0u {
        bv = bias[base_byte(2u) / 4u + oc];
    }
    return clamp_f32(total + bv, bitcast<f32>(param(17u)), bitcast<f32>(param(18u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(7u) * param(8u) * param(9u);
    let out0 = base_byte(3u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
