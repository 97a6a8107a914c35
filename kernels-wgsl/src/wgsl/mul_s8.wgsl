// mul_s8: ember-kernels' `MulS8` (TFLM's reference_integer_ops `Mul`/`BroadcastMul6DSlow`):
// the product of the offset inputs, rescaled once. binary_s8.wgsl holds the bindings and
// loads, each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 input1_offset,
// 13 input2_offset, 14 output_offset, 15 output_multiplier, 16 output_shift, 17 act_min,
// 18 act_max.

fn combine(x1: i32, x2: i32) -> i32 {
    let a = param_i32(12u) + x1;
    let b = param_i32(13u) + x2;
    let out = multiply_by_quantized_multiplier(a * b, param_i32(15u), param_i32(16u))
        + param_i32(14u);
    return clamp_s8(out, param_i32(17u), param_i32(18u));
}
