// requantize_s8_u8: ember-kernels' `RequantizeS8U8` (TFLM's QUANTIZE from int8 to uint8,
// its `Requantize`): `clamp(MultiplyByQuantizedMultiplier(x - input_zero_point) +
// output_zero_point, act_min, act_max)` within uint8, written as the byte each_byte_s8.wgsl
// stores (its loop). An element reads only its own input, so the output may alias the
// input.
//
// Parameter words: 0 len, 1 input_zero_point, 2 output_zero_point, 3 multiplier, 4 shift,
// 5 act_min, 6 act_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

fn element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    let centered = s8_of(input[b / 4u], b % 4u) - param_i32(1u);
    let scaled = multiply_by_quantized_multiplier(centered, param_i32(3u), param_i32(4u));
    return clamp_s8(scaled + param_i32(2u), param_i32(5u), param_i32(6u));
}
