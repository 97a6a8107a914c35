// resize_bilinear_f32: ember-kernels' `ResizeBilinearF32` (TFLM's reference
// `ResizeBilinear<float>`): each output pixel of an NHWC tensor interpolated between the
// four input pixels around its position, in f32, every operation in the reference's order
// (the scale's division correctly rounded by div_rn.wgsl; sizes up to 2^20 convert to f32
// exactly). Each invocation computes whole output elements; the output must not alias the
// input.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 depth, 4 output_height,
// 5 output_width, 6 align_corners, 7 half_pixel_centers.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

// Where an output index samples along an axis: two input indices and their weights.
struct Sample {
    lower: u32,
    upper: u32,
    lower_weight: f32,
    upper_weight: f32,
}

// TFLM's scale and `ComputeInterpolationValues`; the weights `1 - (p - lower)` and
// `p - lower`.
fn sample(index: u32, input_size: u32, output_size: u32) -> Sample {
    var scale = div_rn(f32(input_size), f32(output_size));
    if param(6u) == 1u && output_size > 1u {
        scale = div_rn(f32(input_size - 1u), f32(output_size - 1u));
    }
    let value = f32(index);
    var scaled = value * scale;
    if param(7u) == 1u {
        scaled = (value + 0.5f) * scale - 0.5f;
    }
    let last = i32(input_size) - 1;
    let lower = max(i32(floor(scaled)), 0);
    let upper = min(i32(ceil(scaled)), last);
    let upper_weight = scaled - f32(lower);
    // Decode refused shapes whose lower index passes the input; the clamp keeps it inside.
    return Sample(u32(min(lower, last)), u32(upper), 1.0f - upper_weight, upper_weight);
}

fn element(e: u32) -> f32 {
    let in_h = param(1u);
    let in_w = param(2u);
    let depth = param(3u);
    let out_h = param(4u);
    let out_w = param(5u);
    let channel = e % depth;
    let x = (e / depth) % out_w;
    let y = (e / (depth * out_w)) % out_h;
    let batch = e / (depth * out_w * out_h);
    let sy = sample(y, in_h, out_h);
    let sx = sample(x, in_w, out_w);
    let in0 = base_byte(0u) / 4u;
    let row0 = (batch * in_h + sy.lower) * in_w;
    let row1 = (batch * in_h + sy.upper) * in_w;
    let v00 = input[in0 + (row0 + sx.lower) * depth + channel];
    let v10 = input[in0 + (row1 + sx.lower) * depth + channel];
    let v01 = input[in0 + (row0 + sx.upper) * depth + channel];
    let v11 = input[in0 + (row1 + sx.upper) * depth + channel];
    let sum = v00 * sy.lower_weight * sx.lower_weight + v10 * sy.upper_weight * sx.lower_weight
        + v01 * sy.lower_weight * sx.upper_weight + v11 * sy.upper_weight * sx.upper_weight;
    // The reference then adds its rounding offset, 0 for float: a -0 becomes +0.
    return select(sum, 0.0f, sum == 0.0f);
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
