// quantize_f32_s8: ember-kernels' `QuantizeF32S8` (TFLM's QUANTIZE from float to int8, its
// `AffineQuantize`): `clamp(i32(roundf(x / scale)) + zero_point, -128, 127)`, the division
// correctly rounded (div_rn.wgsl), `roundf` taking halves away from zero, the conversion as
// the oracle's x86-64 does it (NaN and values outside `i32` give `i32::MIN`) and the zero
// point's addition wrapping. each_byte_s8.wgsl runs the loop; the output must not alias the
// input (it is written a word of four elements at a time).
//
// Parameter words: 0 len, 1 scale bits, 2 zero_point.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

// C's `roundf`: halves away from zero (WGSL's `round` takes them to even). `q - trunc(q)` is
// exact, and 0 from 2^23 up.
fn round_half_away(q: f32) -> f32 {
    let t = trunc(q);
    return select(t, t + sign(q), abs(q - t) >= 0.5f);
}

// ember-kernels' `f32_to_i32_like_x86` of an integral `x`: `i32::MIN` for NaN and for values
// outside the `i32` range (the conversion itself is undefined there).
fn to_i32_like_x86(x: f32) -> i32 {
    if x >= -2147483648.0f && x < 2147483648.0f {
        return i32(x);
    }
    return i32(-2147483647 - 1);
}

fn element(e: u32) -> i32 {
    let x = input[base_byte(0u) / 4u + e];
    let q = round_half_away(div_rn(x, bitcast<f32>(param(1u))));
    let v = bitcast<u32>(to_i32_like_x86(q)) + param(2u);
    return clamp_s8(bitcast<i32>(v), -128, 127);
}
