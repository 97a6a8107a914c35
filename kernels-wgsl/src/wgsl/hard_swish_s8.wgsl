// hard_swish_s8: ember-kernels' `HardSwishS8` (TFLM's int8 HARD_SWISH, 16-bit fixed point):
// every int16 step of the reference done in i32 and narrowed as C++ narrows it (`i16_of`).
// each_byte_s8.wgsl runs the loop; an element reads only its own input, so the output may
// alias the input.
//
// Parameter words: 0 len, 1 input_zero_point, 2 output_zero_point, 3 output_multiplier,
// 4 output_exponent, 5 reluish_multiplier, 6 reluish_exponent.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

// The low 16 bits, sign-extended: C++'s conversion to int16.
fn i16_of(v: i32) -> i32 {
    return (v << 16u) >> 16u;
}

// gemmlowp's int16 `SaturatingRoundingDoublingHighMul`.
fn rounding_doubling_high_mul16(a: i32, b: i32) -> i32 {
    if a == b && a == -32768 {
        return 32767;
    }
    let product = a * b;
    let nudge = select(1 - 16384, 16384, product >= 0);
    return i16_of((product + nudge) / 32768);
}

// TFLM's int16 `SaturatingDoublingHighMul` (toward zero).
fn doubling_high_mul16(a: i32, b: i32) -> i32 {
    if a == b && a == -32768 {
        return 32767;
    }
    return i16_of((a * b) / 32768);
}

// TFLM's `SaturatingLeftShift` on int16, for `amount` in 0..=31.
fn saturating_left_shift16(value: i32, amount: u32) -> i32 {
    if value == 0 {
        return 0;
    }
    // |value| < 2^15: beyond a shift of 16 the product saturates whatever it is.
    if amount >= 16u {
        return select(-32768, 32767, value > 0);
    }
    return clamp(value << amount, -32768, 32767);
}

// gemmlowp's `RoundingDivideByPOT` on int16, masks and sums narrowed to int16.
fn rounding_divide_by_pot16(x: i32, exponent: u32) -> i32 {
    var mask = -1;
    if exponent < 16u {
        mask = i32((1u << exponent) - 1u);
    }
    mask = i16_of(mask);
    let remainder = i16_of(x & mask);
    let threshold = i16_of((mask >> 1u) + select(0, 1, x < 0));
    let shifted = select(x >> exponent, select(0, -1, x < 0), exponent >= 32u);
    return i16_of(shifted + select(0, 1, remainder > threshold));
}

fn element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    let input_value = i16_of(s8_of(input[b / 4u], b % 4u) - param_i32(1u));
    let hires = i16_of(input_value * 128);
    let preshift_output = rounding_doubling_high_mul16(hires, param_i32(3u));
    let exponent = param_i32(6u);
    var reluish = hires;
    if exponent > 0 {
        reluish = saturating_left_shift16(reluish, u32(exponent - 1));
    }
    reluish = rounding_doubling_high_mul16(reluish, param_i32(5u));
    if exponent > 0 {
        reluish = saturating_left_shift16(reluish, 1u);
    }
    if exponent < 0 {
        reluish = rounding_divide_by_pot16(reluish, u32(-exponent));
    }
    reluish = i16_of((reluish + 32768) >> 1u);
    let preshift = doubling_high_mul16(reluish, preshift_output);
    let shifted = rounding_divide_by_pot16(preshift, u32(-param_i32(4u)));
    let value = i16_of(shifted + param_i32(2u));
    return clamp(value, -128, 127);
}
