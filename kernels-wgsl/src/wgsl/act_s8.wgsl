// Shared by the int8 activations logistic_s8 and tanh_s8 (ember-kernels' `ActS8`): build.rs
// appends this file to each. A centered input at or beyond the radius saturates to
// -128 / 127; any other is rescaled to Q4.27 and passed to the kernel's
// `activation(input_in_q4) -> i32`. Each invocation computes whole words of the output (up
// to 4 outputs), keeping the bytes of a word that lie outside the output, and reads only
// the inputs of its own word, so the output may alias the input.
//
// Parameter words: 0 len, 1 input_zero_point, 2 input_range_radius, 3 input_multiplier,
// 4 input_left_shift.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    let centered = s8_of(input[b / 4u], b % 4u) - param_i32(1u);
    let radius = param_i32(2u);
    if centered <= -radius {
        return -128;
    }
    if centered >= radius {
        return 127;
    }
    return activation(multiply_by_quantized_multiplier(centered, param_i32(3u), param_i32(4u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u);
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
