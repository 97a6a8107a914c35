// gemmlowp's fixed point, as ember-kernels' `fixed_point` computes it: shared by the
// quantized softmaxes and log softmax, logistic_s8, tanh_s8, l2_normalization_s8 and div_s8
// (build.rs appends this file to each). Raw values
// are i32 with `31 - I` fractional bits (`QI.(31-I)`); products are `srdhm`.

const I32_MIN: i32 = -2147483647 - 1;
const I32_MAX: i32 = 2147483647;

// gemmlowp's `SaturatingRoundingMultiplyByPOT` for `exponent` in -31..=31.
fn sat_rounding_mul_by_pot(x: i32, exponent: i32) -> i32 {
    if exponent > 0 {
        let threshold = (1 << u32(31 - exponent)) - 1;
        if x > threshold {
            return I32_MAX;
        }
        if x < -threshold {
            return I32_MIN;
        }
        return bitcast<i32>(bitcast<u32>(x) << u32(exponent));
    }
    if exponent < 0 {
        return rounding_divide_by_pot(x, u32(-exponent));
    }
    return x;
}

// gemmlowp's `exp_on_interval_between_negative_one_quarter_and_0_excl` (Q0.31).
fn exp_on_interval(a: i32) -> i32 {
    let constant_term = 1895147668;
    let constant_1_over_3 = 715827883;
    let x = a + (1 << 28u);
    let x2 = srdhm(x, x);
    let x3 = srdhm(x2, x);
    let x4 = srdhm(x2, x2);
    let x4_over_4 = sat_rounding_mul_by_pot(x4, -2);
    let inner = srdhm(x4_over_4 + x3, constant_1_over_3);
    let poly = sat_rounding_mul_by_pot(inner + x2, -1);
    return constant_term + srdhm(constant_term, x + poly);
}

// The barrel shifter's multiplier `exp(-2^(k - 2))` in Q0.31, `k` in 0..=6.
fn exp_barrel(k: u32) -> i32 {
    switch k {
        case 0u: { return 1672461947; }
        case 1u: { return 1302514674; }
        case 2u: { return 790015084; }
        case 3u: { return 290630308; }
        case 4u: { return 39332535; }
        case 5u: { return 720401; }
        default: { return 242; }
    }
}

// gemmlowp's `exp_on_negative_values` for `a <= 0` with `int_bits` integer bits (at most
// 5, so gemmlowp's clamp below -32 never applies), in Q0.31: the fractional quarter by
// `exp_on_interval`, then one multiplication by `exp(-2^e)` for each set bit `e` (-2..=4,
// those below the integer bits) of the rest.
fn exp_on_negative_values(a: i32, int_bits: u32) -> i32 {
    let fractional_bits = 31u - int_bits;
    let one_quarter = 1 << (fractional_bits - 2u);
    let mask = one_quarter - 1;
    let a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
    var result = exp_on_interval(
        sat_rounding_mul_by_pot(a_mod_quarter_minus_one_quarter, i32(int_bits)),
    );
    let remainder = a_mod_quarter_minus_one_quarter - a;
    // Exponent `k - 2` is bit `fractional_bits + k - 2`.
    for (var k = 0u; k < 7u; k++) {
        if k < int_bits + 2u && (remainder & (1 << (fractional_bits + k - 2u))) != 0 {
            result = srdhm(result, exp_barrel(k));
        }
    }
    if a == 0 {
        result = I32_MAX;
    }
    return result;
}

// RoundingHalfSum(a, one) for Q0.31 `a` in [0, 1): `(a + 2^31 - 1 + 1) / 2`.
fn half_denominator_of(a: i32) -> i32 {
    var half_denominator = (a >> 1u) + (1 << 30u);
    if a == I32_MIN {
        half_denominator = -1;
    }
    return half_denominator;
}

// Three Newton-Raphson steps toward `1 / half_denominator` from `48/17 - 32/17 * d`, in
// Q2.29.
fn newton_reciprocal(half_denominator: i32) -> i32 {
    // 48/17 and -32/17 in Q2.29.
    var x = 1515870810 + srdhm(half_denominator, -1010580540);
    for (var i = 0; i < 3; i++) {
        let half_denominator_times_x = srdhm(half_denominator, x);
        let one_minus_half_denominator_times_x = (1 << 29u) - half_denominator_times_x;
        let step = srdhm(x, one_minus_half_denominator_times_x);
        x = x + sat_rounding_mul_by_pot(step, 2);
    }
    return x;
}

// gemmlowp's `one_over_one_plus_x_for_x_in_0_1` (Q0.31 in and out).
fn one_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    return sat_rounding_mul_by_pot(newton_reciprocal(half_denominator_of(a)), 1);
}

// gemmlowp's `one_minus_x_over_one_plus_x_for_x_in_0_1` (Q0.31 in and out).
fn one_minus_x_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    return sat_rounding_mul_by_pot(newton_reciprocal(half_denominator_of(a)) - (1 << 29u), 2);
}

// TFLite's `GetReciprocal(x, integer_digits)` for `x >= 0`: the Q0.31 reciprocal of `x`
// normalized into [1, 2), and `num_bits_over_unit` (`integer_digits` minus `x`'s headroom
// plus one). For 0, as TFLM computes it, the headroom plus one is 32 and the reciprocal
// that of `1 + -1`.
struct Reciprocal {
    shifted_scale: i32,
    num_bits_over_unit: i32,
}

fn get_reciprocal(x: i32, integer_digits: i32) -> Reciprocal {
    let headroom_plus_one = countLeadingZeros(bitcast<u32>(x));
    var shifted = 0u;
    if headroom_plus_one < 32u {
        shifted = bitcast<u32>(x) << headroom_plus_one;
    }
    let shifted_minus_one = bitcast<i32>(shifted - 0x80000000u);
    return Reciprocal(
        one_over_one_plus_x_for_x_in_0_1(shifted_minus_one),
        integer_digits - i32(headroom_plus_one),
    );
}

// gemmlowp's `RoundingHalfSum` for i32: `(a + b) / 2` rounded half away from zero, without
// a 64-bit sum.
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let half = (a >> 1u) + (b >> 1u);
    let low = (a & 1) + (b & 1);
    return half + select(low >> 1u, (low + 1) >> 1u, half >= 0);
}

// `a + b` saturated to i32.
fn saturating_add(a: i32, b: i32) -> i32 {
    let s = a + b;
    if a >= 0 && b >= 0 && s < 0 {
        return I32_MAX;
    }
    if a < 0 && b < 0 && s >= 0 {
        return I32_MIN;
    }
    return s;
}

// `a - b` saturated to i32.
fn saturating_sub(a: i32, b: i32) -> i32 {
    let d = a - b;
    if a >= 0 && b < 0 && d < 0 {
        return I32_MAX;
    }
    if a < 0 && b >= 0 && d >= 0 {
        return I32_MIN;
    }
    return d;
}

// TFLite's `log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>`, as ember-kernels'
// `log_x_for_x_greater_than_or_equal_to_1`: Q12.19 in (at least 1), Q5.26 out, accumulated
// in Q6.25.
fn log_x_for_x_greater_than_or_equal_to_1(z_a: i32) -> i32 {
    let log_2 = 1488522236;
    let sqrt_sqrt_half = 1805811301;
    let sqrt_half = 1518500250;
    let alpha_n = 117049297;
    let alpha_d = 127690142;
    let alpha_i = 1057819769;
    let alpha_f = 638450708;
    // Rescale<6> of a Q0.31 quarter.
    let shifted_quarter = sat_rounding_mul_by_pot(536870912, -6);

    let z_a_headroom_plus_1 = i32(countLeadingZeros(bitcast<u32>(z_a)));
    let r_a_tmp = sat_rounding_mul_by_pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a_raw = sat_rounding_mul_by_pot(srdhm(r_a_tmp, sqrt_half), 1);
    let z_a_pow_2_adj =
        saturating_add(sat_rounding_mul_by_pot(12 - z_a_headroom_plus_1, 25), shifted_quarter);

    let z_b = srdhm(z_a, sqrt_half);
    let z_b_headroom = i32(countLeadingZeros(bitcast<u32>(z_b))) - 1;
    let r_b_raw = sat_rounding_mul_by_pot(z_a, z_b_headroom);
    let z_b_pow_2_adj =
        saturating_sub(sat_rounding_mul_by_pot(12 - z_b_headroom, 25), shifted_quarter);

    let r = min(r_a_raw, r_b_raw);
    let z_pow_2_adj = max(z_a_pow_2_adj, z_b_pow_2_adj);

    let p = rounding_half_sum(r, sqrt_sqrt_half);
    var q = r - sqrt_sqrt_half;
    q = q + q;

    let common_sq = srdhm(q, q);
    let num = srdhm(q, r) + srdhm(srdhm(q, common_sq), alpha_n);
    let denom_minus_one_0 =
        srdhm(p, alpha_i + q + srdhm(alpha_d, common_sq)) + srdhm(alpha_f, q);
    let recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0);

    let num_scaled = sat_rounding_mul_by_pot(num, -6);
    let sum = srdhm(z_pow_2_adj, log_2) + srdhm(num_scaled, recip_denom);
    return sat_rounding_mul_by_pot(sum, 1);
}
