// leaky_relu_s8: ember-kernels' `LeakyReluS8` (TFLM's `QuantizeLeakyRelu` on int8): the
// centered input rescaled by the identity multiplier from zero up, by alpha's magnitude
// below (negated for a negative alpha), offset and clamped. each_byte_s8.wgsl runs the
// loop; an element reads only its own input, so the output may alias the input.
//
// Parameter words: 0 len, 1 input_zero_point, 2 output_zero_point, 3 identity_multiplier,
// 4 identity_shift, 5 alpha_multiplier, 6 alpha_shift.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

fn element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    let centered = s8_of(input[b / 4u], b % 4u) - param_i32(1u);
    var scaled: i32;
    if centered >= 0 {
        scaled = multiply_by_quantized_multiplier(centered, param_i32(3u), param_i32(4u));
    } else {
        let alpha = param_i32(5u);
        let magnitude = multiply_by_quantized_multiplier(centered, abs(alpha), param_i32(6u));
        scaled = select(magnitude, -magnitude, alpha < 0);
    }
    return clamp_s8(scaled + param_i32(2u), -128, 127);
}
