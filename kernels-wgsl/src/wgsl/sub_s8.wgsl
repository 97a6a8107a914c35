// sub_s8: ember-kernels' `SubS8` (TFLM's reference `Sub`/`BroadcastQuantSubSlow`): add_s8's
// parameters and steps, the difference of the rescaled inputs in place of their sum.
// binary_s8.wgsl holds the bindings and loads, each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 left_shift,
// 13 input1_offset, 14 input1_multiplier, 15 input1_shift, 16 input2_offset,
// 17 input2_multiplier, 18 input2_shift, 19 output_offset, 20 output_multiplier,
// 21 output_shift, 22 act_min, 23 act_max.

fn combine(x1: i32, x2: i32) -> i32 {
    let left = param(12u);
    let a = bitcast<i32>(bitcast<u32>(param_i32(13u) + x1) << left);
    let b = bitcast<i32>(bitcast<u32>(param_i32(16u) + x2) << left);
    let sa = multiply_by_quantized_multiplier(a, param_i32(14u), param_i32(15u));
    let sb = multiply_by_quantized_multiplier(b, param_i32(17u), param_i32(18u));
    let out = multiply_by_quantized_multiplier(sa - sb, param_i32(20u), param_i32(21u))
        + param_i32(19u);
    return clamp_s8(out, param_i32(22u), param_i32(23u));
}
