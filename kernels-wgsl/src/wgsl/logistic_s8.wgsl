// logistic_s8: ember-kernels' `LogisticS8` (TFLM's reference_integer_ops `Logistic`,
// gemmlowp's fixed-point `logistic` on a Q4.27 input). The output is in units of 1/256
// with zero point -128. act_s8.wgsl holds the bindings, the saturation and the loop;
// fixed_point.wgsl the arithmetic.

// gemmlowp's `logistic` of a Q4.27 input, in Q0.31: `1 / (1 + exp(-|a|))`, mirrored for
// negative `a`; exactly one half at zero.
fn logistic_q0(a: i32) -> i32 {
    let positive = a > 0;
    let abs_input = select(-a, a, positive);
    let result_if_positive =
        one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-abs_input, 4u));
    if a == 0 {
        return 1 << 30u;
    }
    return select(I32_MAX - result_if_positive, result_if_positive, positive);
}

fn activation(input_in_q4: i32) -> i32 {
    // Q0.31 to Q23.8, then the zero point.
    return clamp_s8(rounding_divide_by_pot(logistic_q0(input_in_q4), 23u) - 128, -128, 127);
}
