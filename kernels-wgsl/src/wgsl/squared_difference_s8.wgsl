// squared_difference_s8: ember-kernels' `SquaredDifferenceS8` (TFLM's quantized
// `SquaredDifference`): both offset inputs shifted left by 7 and rescaled to a common scale
// as add_s8's, their difference squared (at most 2^30), rescaled to the output and clamped
// to int8. binary_s8.wgsl holds the bindings and loads, each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 input1_offset,
// 13 input1_multiplier, 14 input1_shift, 15 input2_offset, 16 input2_multiplier,
// 17 input2_shift, 18 output_offset, 19 output_multiplier, 20 output_shift.

fn combine(x1: i32, x2: i32) -> i32 {
    let a = bitcast<i32>(bitcast<u32>(param_i32(12u) + x1) << 7u);
    let b = bitcast<i32>(bitcast<u32>(param_i32(15u) + x2) << 7u);
    let sa = multiply_by_quantized_multiplier(a, param_i32(13u), param_i32(14u));
    let sb = multiply_by_quantized_multiplier(b, param_i32(16u), param_i32(17u));
    let diff = sa - sb;
    let out = multiply_by_quantized_multiplier(diff * diff, param_i32(19u), param_i32(20u))
        + param_i32(18u);
    return clamp_s8(out, -128, 127);
}
