// Shared by the quantized softmax kernels (`softmax_s8`, `softmax_s8_s16`): build.rs appends
// it, and rows_s8.wgsl (the bindings and loop), after each one's own source. ember-kernels'
// `QuantRows` arithmetic (TFLM's reference_ops `Softmax`, gemmlowp fixed point) along rows
// of `depth` elements: a row's max, sum of exponentials and reciprocal, and each output for
// the kernel's output range (`OUT_BITS`, 8 or 16, `OUT_MIN`, `OUT_MAX`).
//
// Parameter words: 0 outer, 1 depth, 2 input_multiplier, 3 input_left_shift (0..=31),
// 4 diff_min (<= 0).

// `input_diff * beta * input_scale` in Q5.26.
fn scaled_diff(input_diff: i32) -> i32 {
    let shifted = bitcast<i32>(bitcast<u32>(input_diff) << param(3u));
    return srdhm(shifted, param_i32(2u));
}

// ember-kernels' `divide_by_pot_any` (the rounding divide for any exponent).
fn divide_by_pot_any(x: i32, exponent: i32) -> i32 {
    if exponent < 0 {
        return x;
    }
    if exponent <= 31 {
        return rounding_divide_by_pot(x, u32(exponent));
    }
    if exponent == 32 && x == I32_MIN {
        return -1;
    }
    return 0;
}

// A row's max, its reciprocal scale and output exponent.
struct Row {
    max_in_row: i32,
    shifted_scale: i32,
    exponent: i32,
}

fn row_of(r: u32) -> Row {
    let depth = param(1u);
    let diff_min = param_i32(4u);
    let first = r * depth;
    let max_in_row = max_of_row(first, depth);
    // Q12.19, saturating (the terms are non-negative).
    var sum_of_exps = 0;
    for (var k = 0u; k < depth; k++) {
        let input_diff = input_s8(first + k) - max_in_row;
        if input_diff >= diff_min {
            let exp = exp_on_negative_values(scaled_diff(input_diff), 5u);
            let term = rounding_divide_by_pot(exp, 12u);
            if term > 0 && sum_of_exps > I32_MAX - term {
                sum_of_exps = I32_MAX;
            } else {
                sum_of_exps += term;
            }
        }
    }
    let sum = max(sum_of_exps, 1);
    let reciprocal = get_reciprocal(sum, 12);
    return Row(
        max_in_row,
        reciprocal.shifted_scale,
        reciprocal.num_bits_over_unit + 31 - OUT_BITS,
    );
}

// Output element `e` of row `row`, in the kernel's output range `OUT_MIN..=OUT_MAX`.
fn element(e: u32, row: Row) -> i32 {
    let input_diff = input_s8(e) - row.max_in_row;
    if input_diff < param_i32(4u) {
        return OUT_MIN;
    }
    let exp_in_0 = exp_on_negative_values(scaled_diff(input_diff), 5u);
    let product = srdhm(row.shifted_scale, exp_in_0);
    let unsat_output = divide_by_pot_any(product, row.exponent);
    return clamp(unsat_output + OUT_MIN, OUT_MIN, OUT_MAX);
}
