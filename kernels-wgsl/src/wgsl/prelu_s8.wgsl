// prelu_s8: ember-kernels' `PreluS8` (TFLM's int8 PRELU, `BroadcastPrelu4DSlow`): the offset
// input rescaled by the identity multiplier from zero up, its product with the offset alpha
// by the alpha multiplier below, then offset and clamped. binary_s8.wgsl holds the bindings
// and loads (input 2 is alpha), each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 input_offset,
// 13 alpha_offset, 14 output_offset, 15 identity_multiplier, 16 identity_shift,
// 17 alpha_multiplier, 18 alpha_shift.

fn combine(x1: i32, x2: i32) -> i32 {
    let input = param_i32(12u) + x1;
    var scaled: i32;
    if input >= 0 {
        scaled = multiply_by_quantized_multiplier(input, param_i32(15u), param_i32(16u));
    } else {
        let alpha = param_i32(13u) + x2;
        scaled = multiply_by_quantized_multiplier(input * alpha, param_i32(17u), param_i32(18u));
    }
    return clamp_s8(scaled + param_i32(14u), -128, 127);
}
