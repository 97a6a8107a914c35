// Shared by mean_s8 and sum_s8 (TFLM's reference `QuantizedMeanOrSum`): build.rs appends
// this file to each. A wrapping i32 sum, the zero point removed once per output; the kernel
// gives `FOLD_COUNT`: whether the multiplier is divided by the count (the mean:
// `(multiplier << shift) / count`, a 64-bit division done here bit by bit). Each invocation
// computes whole words of the output (up to 4 outputs), keeping the bytes of a word that lie
// outside the output. `output` must not alias `input`.
//
// Parameter words: mean_shape.wgsl's (`rank + 2` of them), then input_zero_point,
// output_zero_point, multiplier, shift.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn own(i: u32) -> i32 {
    return param_i32(mean_rank() + 2u + i);
}

// `(m << shift) / n` truncated toward zero, for `|m| < 2^31`, `shift` in 0..=32 and `n`
// in 1..2^31 (the quotient then fits in 31 bits): restoring division over the 64-bit
// dividend's bits.
fn folded_multiplier(m: i32, shift: u32, n: u32) -> i32 {
    let magnitude = u32(abs(m));
    var hi = 0u;
    var lo = 0u;
    if shift == 32u {
        hi = magnitude;
    } else if shift > 0u {
        hi = magnitude >> (32u - shift);
        lo = magnitude << shift;
    } else {
        lo = magnitude;
    }
    var remainder = 0u;
    var quotient = 0u;
    for (var i = 0u; i < 64u; i++) {
        var bit = 0u;
        if i < 32u {
            bit = (hi >> (31u - i)) & 1u;
        } else {
            bit = (lo >> (63u - i)) & 1u;
        }
        remainder = (remainder << 1u) | bit;
        quotient = quotient << 1u;
        if remainder >= n {
            remainder -= n;
            quotient |= 1u;
        }
    }
    return select(i32(quotient), -i32(quotient), m < 0);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = mean_outputs();
    if n == 0u {
        return;
    }
    let per_output = mean_count();
    // For the mean TFLM folds the division by the count into the multiplier.
    var multiplier = own(2u);
    var out_shift = own(3u);
    let fold = min(min(31 - i32(countLeadingZeros(per_output)), 32), 31 + own(3u));
    if FOLD_COUNT && fold >= 0 {
        multiplier = folded_multiplier(own(2u), u32(fold), per_output);
        out_shift = own(3u) - fold;
    }
    let zp_total = own(0u) * i32(per_output);
    let in0 = base_byte(0u);
    let start = base_byte(1u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                let o = b - start;
                var sum = 0;
                for (var j = 0u; j < per_output; j++) {
                    let at = in0 + mean_input_index(o, j);
                    sum += s8_of(input[at / 4u], at % 4u);
                }
                let v = multiply_by_quantized_multiplier(sum - zp_total, multiplier, out_shift)
                    + own(1u);
                word = with_byte(word, l, clamp_s8(v, -128, 127));
            }
        }
        output[w] = word;
    }
}
