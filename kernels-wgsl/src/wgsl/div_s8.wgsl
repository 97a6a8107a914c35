// div_s8: ember-kernels' `DivS8` (TFLM's reference `Div`/`BroadcastDivSlow` for int8): the
// offset divisor's fixed-point reciprocal (`GetReciprocal`), the offset dividend normalized
// by its leading sign bits, their product rescaled once, then TFLM's x86-64
// `RoundingDivideByPOT` by an exponent that may exceed 31. binary_s8.wgsl holds the
// bindings and loads, each_byte_s8.wgsl the loop, fixed_point.wgsl `get_reciprocal`.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 input1_offset,
// 13 input2_offset, 14 output_offset, 15 output_multiplier, 16 output_shift (-24..=22, so
// the rounding exponent stays within 0..=63), 17 act_min, 18 act_max.

// gemmlowp's `CountLeadingSignBits` (31 for 0 and -1).
fn count_leading_sign_bits(x: i32) -> u32 {
    return countLeadingZeros(bitcast<u32>(x ^ (x >> 31u))) - 1u;
}

// `RoundingDivideByPOT` as TFLM's x86-64 build computes it for `exponent` in 0..=63: above
// 31 the mask is the low 32 bits of the 64-bit `(1 << exponent) - 1` (all ones) and the
// shift is by `exponent mod 32`.
fn tflm_rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    var mask = -1;
    if exponent < 32u {
        mask = bitcast<i32>((1u << exponent) - 1u);
    }
    let remainder = x & mask;
    let threshold = (mask >> 1u) + select(0, 1, x < 0);
    return (x >> (exponent & 31u)) + select(0, 1, remainder > threshold);
}

fn combine(x1: i32, x2: i32) -> i32 {
    var dividend = param_i32(12u) + x1;
    var divisor = param_i32(13u) + x2;
    if divisor < 0 {
        dividend = -dividend;
        divisor = -divisor;
    }
    let r = get_reciprocal(divisor, 31);
    let headroom = count_leading_sign_bits(dividend);
    let unscaled = srdhm(bitcast<i32>(bitcast<u32>(dividend) << headroom), r.shifted_scale);
    let exponent = u32(r.num_bits_over_unit + i32(headroom) - param_i32(16u));
    let quotient = tflm_rounding_divide_by_pot(srdhm(unscaled, param_i32(15u)), exponent);
    return clamp_s8(param_i32(14u) + quotient, param_i32(17u), param_i32(18u));
}
