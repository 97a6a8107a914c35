// log_softmax_s8: ember-kernels' `LogSoftmaxS8` (TFLM's int8 LOG_SOFTMAX along the last
// dimension, `LogSoftmaxQuantized<int8_t>`, gemmlowp fixed point): a row's max, its sum of
// exponentials in Q12.19, the log of the sum in Q5.26, and each output `(scaled_diff -
// log_sum) / 2^22 + 127` saturated. rows_s8.wgsl holds the bindings and the loop (a row's
// max, sum and log once per output word), fixed_point.wgsl gemmlowp's functions; the
// output must not alias the input.
//
// Parameter words: 0 outer, 1 depth, 2 input_multiplier, 3 input_left_shift (0..=31),
// 4 reverse_scaling_divisor, 5 reverse_scaling_shift (-31..=0), 6 diff_min (<= 0).

const OUT_BITS: i32 = 8;
const OUT_MIN: i32 = -128;
const OUT_MAX: i32 = 127;

// `input_diff * input_scale * 2^26` in Q5.26.
fn scaled_diff(input_diff: i32) -> i32 {
    return multiply_by_quantized_multiplier(input_diff, param_i32(2u), param_i32(3u));
}

// A row's max, the log of its sum of exponentials (Q5.26), and the difference from the max
// at or below which an output is -128.
struct Row {
    max_in_row: i32,
    log_sum_of_exps: i32,
    adjusted_diff_min: i32,
}

fn row_of(r: u32) -> Row {
    let depth = param(1u);
    let diff_min = param_i32(6u);
    let first = r * depth;
    let max_in_row = max_of_row(first, depth);
    // Q12.19, wrapping as gemmlowp's `+` (it cannot below 4096 elements a row).
    var sum_of_exps = 0;
    for (var k = 0u; k < depth; k++) {
        let input_diff = input_s8(first + k) - max_in_row;
        if input_diff >= diff_min {
            let exp = exp_on_negative_values(scaled_diff(input_diff), 5u);
            sum_of_exps += rounding_divide_by_pot(exp, 12u);
        }
    }
    let log_sum_of_exps = log_x_for_x_greater_than_or_equal_to_1(sum_of_exps);
    let adjusted_diff_min = max(
        diff_min - 1,
        multiply_by_quantized_multiplier(log_sum_of_exps + I32_MIN, param_i32(4u), param_i32(5u)),
    );
    return Row(max_in_row, log_sum_of_exps, adjusted_diff_min);
}

fn element(e: u32, row: Row) -> i32 {
    let input_diff = input_s8(e) - row.max_in_row;
    if input_diff <= row.adjusted_diff_min {
        return OUT_MIN;
    }
    let output = rounding_divide_by_pot(scaled_diff(input_diff) - row.log_sum_of_exps, 22u) + 127;
    return clamp(output, OUT_MIN, OUT_MAX);
}
