// gemmlowp's fixed point, as ember-kernels' `fixed_point` computes it: shared by
// the quantized softmaxes, logistic_s8 and tanh_s8 (build.rs appends this file to each). Raw values
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
