// depthwise_conv2d_f32: ember-kernels' `DepthwiseConv2dF32` (TFLM's reference
// `DepthwiseConv<float>`), any depth multiplier. Each invocation computes whole output
// elements: output channel `oc` reads input channel `oc / depth_multiplier`; the products
// of the taps inside the input summed from 0 in row-major order, then the bias, then the
// clamp.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 depth_multiplier, 5 filter_height, 6 filter_width, 7 output_height, 8 output_width,
// 9 stride_height, 10 stride_width, 11 dilation_height, 12 dilation_width, 13 pad_height,
// 14 pad_width, 15 has_bias, 16 act_min bits, 17 act_max bits.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;

// Output `e` of `[batches, output_height, output_width, input_depth * depth_multiplier]`.
fn element(e: u32) -> f32 {
    let ih = i32(param(1u));
    let iw = i32(param(2u));
    let id = param(3u);
    let mult = param(4u);
    let fh = param(5u);
    let fw = param(6u);
    let oh = param(7u);
    let ow = param(8u);
    let dh = i32(param(11u));
    let dw = i32(param(12u));
    let od = id * mult;
    let oc = e % od;
    let ic = oc / mult;
    let pixel = e / od;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let y0 = i32(oy * param(9u)) - i32(param(13u));
    let x0 = i32(ox * param(10u)) - i32(param(14u));
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
            let i = in0 + (row + u32(x)) * id + ic;
            let f = f0 + (fy * fw + fx) * od + oc;
            total += input[i] * weights[f];
        }
    }
    var bv = 0.0f;
    if param(15u) != 0u {
        bv = bias[base_byte(2u) / 4u + oc];
    }
    return clamp_f32(total + bv, bitcast<f32>(param(16u)), bitcast<f32>(param(17u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(7u) * param(8u) * param(3u) * param(4u);
    let out0 = base_byte(3u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
