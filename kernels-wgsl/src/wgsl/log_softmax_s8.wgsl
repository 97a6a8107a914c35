// log_softmax_s8: ember-kernels' `LogSoftmaxS8` (TFLM's int8 LOG_SOFTMAX along the last
// dimension, `LogSoftmaxQuantized<int8_t>`, gemmlowp fixed point): a row's max, its sum of
// exponentials in Q12.19, the log of the sum in Q5.26, and each output `(scaled_diff -
// log_sum) / 2^22 + 127` saturated. Each element computes its row's max, sum and log again
// (no invocation depends on another). each_byte_s8.wgsl holds the loop, fixed_point.wgsl
// gemmlowp's functions; the output must not alias the input.
//
// Parameter words: 0 outer, 1 depth, 2 input_multiplier, 3 input_left_shift (0..=31),
// 4 reverse_scaling_divisor, 5 reverse_scaling_shift (-31..=0), 6 diff_min (<= 0).

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u) * param(1u);
}

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// `input_diff * input_scale * 2^26` in Q5.26.
fn scaled_diff(input_diff: i32) -> i32 {
    return multiply_by_quantized_multiplier(input_diff, param_i32(2u), param_i32(3u));
}

// gemmlowp's `RoundingHalfSum` for i32: `(a + b) / 2` rounded half away from zero, without
// a 64-bit sum.
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let half = (a >> 1u) + (b >> 1u);
    let low = (a & 1) + (b & 1);
    return half + select(low >> 1u, (low + 1) >> 1u, half >= 0);
}

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
// `log_x_for_x_greater_than_or_equal_to_1`: Q12.19 in, Q5.26 out, accumulated in Q6.25.
fn log_x(z_a: i32) -> i32 {
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

fn element(e: u32) -> i32 {
    let depth = param(1u);
    let diff_min = param_i32(6u);
    let first = (e / depth) * depth;
    var max_in_row = -128;
    for (var k = 0u; k < depth; k++) {
        max_in_row = max(max_in_row, input_s8(first + k));
    }
    // Q12.19, wrapping as gemmlowp's `+` (it cannot below 4096 elements a row).
    var sum_of_exps = 0;
    for (var k = 0u; k < depth; k++) {
        let input_diff = input_s8(first + k) - max_in_row;
        if input_diff >= diff_min {
            let exp = exp_on_negative_values(scaled_diff(input_diff), 5u);
            sum_of_exps += rounding_divide_by_pot(exp, 12u);
        }
    }
    let log_sum_of_exps = log_x(sum_of_exps);
    let adjusted_diff_min = max(
        diff_min - 1,
        multiply_by_quantized_multiplier(log_sum_of_exps + I32_MIN, param_i32(4u), param_i32(5u)),
    );
    let input_diff = input_s8(e) - max_in_row;
    if input_diff <= adjusted_diff_min {
        return -128;
    }
    let output = rounding_divide_by_pot(scaled_diff(input_diff) - log_sum_of_exps, 22u) + 127;
    return clamp(output, -128, 127);
}
