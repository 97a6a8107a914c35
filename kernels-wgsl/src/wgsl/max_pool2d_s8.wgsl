// max_pool2d_s8: ember-kernels' `MaxPool2dS8` (TFLM's reference_integer_ops `MaxPool`).
// Each invocation computes whole words of the output (up to 4 outputs), keeping the bytes
// of a word that lie outside the output.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 depth, 4 output_height,
// 5 output_width, 6 filter_height, 7 filter_width, 8 stride_height, 9 stride_width,
// 10 pad_height, 11 pad_width, 12 act_min, 13 act_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// Output `e` of `[batches, output_height, output_width, depth]`: the largest of the window's
// cells inside the input (-128 where none is), clamped.
fn element(e: u32) -> i32 {
    let ih = param_i32(1u);
    let iw = param_i32(2u);
    let d = param(3u);
    let oh = param(4u);
    let ow = param(5u);
    let c = e % d;
    let pixel = e / d;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let y0 = bitcast<i32>(oy * param(8u)) - param_i32(10u);
    let x0 = bitcast<i32>(ox * param(9u)) - param_i32(11u);
    let fy0 = max(-y0, 0);
    let fy1 = min(param_i32(6u), ih - y0);
    let fx0 = max(-x0, 0);
    let fx1 = min(param_i32(7u), iw - x0);
    var m = -128;
    for (var fy = fy0; fy < fy1; fy++) {
        let row = (b * u32(ih) + u32(y0 + fy)) * u32(iw);
        for (var fx = fx0; fx < fx1; fx++) {
            m = max(m, input_s8((row + u32(x0 + fx)) * d + c));
        }
    }
    return clamp_s8(m, param_i32(12u), param_i32(13u));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(4u) * param(5u) * param(3u);
    if n == 0u {
        return;
    }
    let start = base_byte(1u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start));
            }
        }
        output[w] = word;
    }
}
