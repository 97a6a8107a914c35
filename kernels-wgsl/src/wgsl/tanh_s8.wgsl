// tanh_s8: ember-kernels' `TanhS8` (TFLM's reference_integer_ops `Tanh`, gemmlowp's
// fixed-point `tanh` on a Q4.27 input). The output is in units of 1/128 with zero point 0.
// act_s8.wgsl holds the bindings, the saturation and the loop; fixed_point.wgsl the
// arithmetic.

// gemmlowp's `tanh` of a Q4.27 input, in Q0.31: `(1 - exp(-2|a|)) / (1 + exp(-2|a|))` with
// the sign of `a` (`-2|a|` is the raw `-|a|` read with 5 integer bits); exactly zero at
// zero.
fn tanh_q0(a: i32) -> i32 {
    let negative = a < 0;
    let n = select(-a, a, negative);
    let t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, 5u));
    if a == 0 {
        return 0;
    }
    return select(t, -t, negative);
}

fn activation(input_in_q4: i32) -> i32 {
    // Q0.31 to Q24.7.
    return clamp_s8(rounding_divide_by_pot(tanh_q0(input_in_q4), 24u), -128, 127);
}
