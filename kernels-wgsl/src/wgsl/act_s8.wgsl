// Shared by the int8 activations logistic_s8 and tanh_s8 (ember-kernels' `ActS8`): build.rs
// appends this file (and each_byte_s8.wgsl) to each. A centered input at or beyond the radius saturates to
// -128 / 127; any other is rescaled to Q4.27 and passed to the kernel's
// `activation(input_in_q4) -> i32`. each_byte_s8.wgsl runs the loop; an element reads only
// its own input, so the output may alias the input.
//
// Parameter words: 0 len, 1 input_zero_point, 2 input_range_radius, 3 input_multiplier,
// 4 input_left_shift.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

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
