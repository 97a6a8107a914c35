// l2_normalization_s8: ember-kernels' `L2NormalizationS8` (TFLM's int8 L2_NORMALIZATION over
// the last dimension): the squares of `x - zero_point` summed in int32, their inverse square
// root by gemmlowp's Newton-Raphson iteration (`GetInvSqrtQuantizedMultiplierExp`), each value
// scaled into Q0.7 and saturated. Each element sums its row again. each_byte_s8.wgsl holds
// the loop; the output must not alias the input.
//
// Parameter words: 0 outer, 1 depth, 2 input_zero_point.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u) * param(1u);
}

fn centred(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u) - param_i32(2u);
}

// `1 / sqrt(input)` as (Q31 multiplier, left shift), as ember-kernels'
// `inv_sqrt_quantized_multiplier_exp`.
fn inv_sqrt(sum: i32) -> vec2<i32> {
    if sum <= 1 {
        return vec2<i32>(I32_MAX, 0);
    }
    var input = sum;
    var shift = 11;
    while input >= (1 << 29u) {
        input = input / 4;
        shift += 1;
    }
    let max_left_shift_bits = countLeadingZeros(u32(input)) - 1u;
    let pairs = max_left_shift_bits / 2u - 1u;
    shift -= i32(pairs);
    input = input << (2u * pairs);
    let half_input = sat_rounding_mul_by_pot(input >> 1u, -1);
    let half_three = (1 << 28u) + (1 << 27u);
    // One in Q3.28.
    var x = 1 << 28u;
    for (var step = 0; step < 5; step++) {
        let x3 = sat_rounding_mul_by_pot(srdhm(srdhm(x, x), x), 6);
        x = sat_rounding_mul_by_pot(srdhm(half_three, x) - srdhm(half_input, x3), 3);
    }
    var multiplier = srdhm(x, 1518500250);
    if shift < 0 {
        multiplier = multiplier << u32(-shift);
        shift = 0;
    }
    return vec2<i32>(multiplier, -shift);
}

fn element(e: u32) -> i32 {
    let depth = param(1u);
    let row = (e / depth) * depth;
    var squares = 0;
    for (var c = 0u; c < depth; c++) {
        let value = centred(row + c);
        squares += value * value;
    }
    let scale = inv_sqrt(squares);
    let scaled = multiply_by_quantized_multiplier(centred(e), scale.x, scale.y + 7);
    return clamp(scaled, -128, 127);
}
