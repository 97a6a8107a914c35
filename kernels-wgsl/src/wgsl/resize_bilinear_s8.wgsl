// resize_bilinear_s8: ember-kernels' `ResizeBilinearS8` (TFLM's reference
// `ResizeBilinearInteger` on int8): each output pixel of an NHWC tensor interpolated
// between the four input pixels around its position, in fixed point with 10 fractional
// bits, the sum divided by 2^20 rounding half away from zero. Every value fits `i32`: the
// sides are at most 2^20 (decode refuses more), the weights lie in -512..=1536 and the
// sum's magnitude is at most 2^29. each_byte_s8.wgsl runs the loop over output words; an
// element reads other elements, so the output must not alias the input.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 depth, 4 output_height,
// 5 output_width, 6 align_corners, 7 half_pixel_centers.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u) * param(4u) * param(5u) * param(3u);
}

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// Where an output index samples along an axis: two input indices and their weights in
// 1/1024ths.
struct Sample {
    lower: u32,
    upper: u32,
    lower_weight: i32,
    upper_weight: i32,
}

// TFLM's scale in 1/1024ths and `ComputeInterpolationValuesInteger` (WGSL's `/` on `i32`
// truncates toward zero, as C's does).
fn sample(index: i32, input_size: i32, output_size: i32) -> Sample {
    var scale = ((1 << 10u) * input_size + output_size / 2) / output_size;
    if param(6u) == 1u && output_size > 1 {
        scale = ((1 << 10u) * (input_size - 1) + (output_size - 1) / 2) / (output_size - 1);
    }
    var scaled = index * scale;
    if param(7u) == 1u {
        scaled = index * scale + scale / 2 - (1 << 9u);
    }
    let lower = max(scaled / 1024, 0);
    let upper = min((scaled + 1023) / 1024, input_size - 1);
    let upper_weight = scaled - 1024 * lower;
    // Decode refused shapes whose lower index passes the input; the clamp keeps it inside.
    return Sample(
        u32(min(lower, input_size - 1)),
        u32(upper),
        1024 - upper_weight,
        upper_weight,
    );
}

fn element(e: u32) -> i32 {
    let in_h = param(1u);
    let in_w = param(2u);
    let depth = param(3u);
    let out_h = param(4u);
    let out_w = param(5u);
    let channel = e % depth;
    let x = (e / depth) % out_w;
    let y = (e / (depth * out_w)) % out_h;
    let batch = e / (depth * out_w * out_h);
    let sy = sample(i32(y), i32(in_h), i32(out_h));
    let sx = sample(i32(x), i32(in_w), i32(out_w));
    let row0 = (batch * in_h + sy.lower) * in_w;
    let row1 = (batch * in_h + sy.upper) * in_w;
    let v00 = input_s8((row0 + sx.lower) * depth + channel);
    let v10 = input_s8((row1 + sx.lower) * depth + channel);
    let v01 = input_s8((row0 + sx.upper) * depth + channel);
    let v11 = input_s8((row1 + sx.upper) * depth + channel);
    let sum = v00 * sy.lower_weight * sx.lower_weight + v10 * sy.upper_weight * sx.lower_weight
        + v01 * sy.lower_weight * sx.upper_weight + v11 * sy.upper_weight * sx.upper_weight;
    let round = select(-(1 << 19u), 1 << 19u, sum > 0);
    return (sum + round) / (1 << 20u);
}
