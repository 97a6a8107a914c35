// Shared by the quantized softmax kernels (`softmax_s8`, `softmax_s8_s16`): build.rs appends
// it after each one's own source. Their bindings, and ember-kernels' `QuantRows` arithmetic
// (TFLM's reference_ops `Softmax`, gemmlowp fixed point) along rows of `depth` elements: a
// row's max, sum of exponentials and reciprocal, and each output for the kernel's output
// range (`OUT_BITS`, 8 or 16, `OUT_MIN`, `OUT_MAX`). Each invocation computes whole words of
// the output (4 / (`OUT_BITS` / 8) outputs), keeping the parts of a word that lie outside
// the output; it computes the max and the sum of exponentials of each row its outputs lie in
// (once per row per word), so no invocation depends on another. `output` must not alias
// `input`; an int16 output starts at an even byte.
//
// Parameter words: 0 outer, 1 depth, 2 input_multiplier, 3 input_left_shift (0..=31),
// 4 diff_min (<= 0).

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

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
    var max_in_row = -128;
    for (var k = 0u; k < depth; k++) {
        max_in_row = max(max_in_row, input_s8(first + k));
    }
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
    // GetReciprocal(sum, 12).
    let headroom_plus_one = countLeadingZeros(bitcast<u32>(sum));
    let num_bits_over_unit = 12 - i32(headroom_plus_one);
    let shifted_sum_minus_one =
        bitcast<i32>((bitcast<u32>(sum) << headroom_plus_one) - 0x80000000u);
    let shifted_scale = one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
    return Row(max_in_row, shifted_scale, num_bits_over_unit + 31 - OUT_BITS);
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

// `word` with output `slot` (of `OUT_BITS` bits, little-endian) replaced by the low bits of
// `v`.
fn with_output(word: u32, slot: u32, v: i32) -> u32 {
    let mask = (1u << u32(OUT_BITS)) - 1u;
    let shift = slot * u32(OUT_BITS);
    return (word & ~(mask << shift)) | ((bitcast<u32>(v) & mask) << shift);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let depth = param(1u);
    let n = param(0u) * depth;
    if n == 0u {
        return;
    }
    // Bytes `start..start + size * n`.
    let size = u32(OUT_BITS) / 8u;
    let start = base_byte(1u);
    let words = words_of(start, size * n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        var have = 0xffffffffu;
        var row = Row(0, 0, 0);
        for (var slot = 0u; slot < 4u / size; slot++) {
            let b = w * 4u + slot * size;
            if b >= start && b < start + size * n {
                let e = (b - start) / size;
                let r = e / depth;
                if r != have {
                    row = row_of(r);
                    have = r;
                }
                word = with_output(word, slot, element(e, row));
            }
        }
        output[w] = word;
    }
}
