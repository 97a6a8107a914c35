// TFLM's `AffineQuantize` of one float before the clamp to the output type, shared by
// quantize_f32_s8 and quantize_f32_s16: `i32(roundf(x / scale)) + zero_point`, the division
// correctly rounded (div_rn.wgsl), `roundf` taking halves away from zero, the conversion as
// the oracle's x86-64 does it (NaN and values outside `i32` give `i32::MIN`) and the zero
// point's addition wrapping.

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

// `i32(roundf(x / scale)) + zero_point`, wrapping; `zero_point` as its word.
fn affine_quantize(x: f32, scale: f32, zero_point: u32) -> i32 {
    let q = round_half_away(div_rn(x, scale));
    return bitcast<i32>(bitcast<u32>(to_i32_like_x86(q)) + zero_point);
}
