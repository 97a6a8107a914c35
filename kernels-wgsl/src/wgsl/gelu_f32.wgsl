// gelu_f32: ember-kernels' `GeluF32` (TFLite's float GELU: `0.5 * x * erfc(x * -1/sqrt(2))`,
// in that order). unary_f32.wgsl holds the bindings and the loop.
//
// erfc here: for z >= 0, `erfc(z) = t * exp(-z^2 + P(t))` with `t = 1 / (1 + z/2)` and P
// the degree-9 Chebyshev fit of Press et al. (Numerical Recipes' `erfcc`, fractional error
// below 1.2e-7 for every z >= 0); `erfc(-z) = 2 - erfc(z)`. `z^2` is split as `zh^2 +
// (z - zh)(z + zh)`, `zh` being z with its low 12 mantissa bits cleared, so `zh^2` is
// exact and the exponent's rounding stays that of a small number: hal-local's `exp_f32`
// of each part, then their product.

// -1/sqrt(2) rounded to f32, as TFLite's `static_cast<float>(-M_SQRT1_2)`.
const MINUS_SQRT1_2: f32 = -0x1.6a09e6p-1f;

// erfc(z) for z >= 0 (NaN passes).
fn erfc_nonnegative(z: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
        + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
        + t * (-0.82215223 + t * 0.17087277))))))));
    let zh = bitcast<f32>(bitcast<u32>(z) & 0xfffff000u);
    let big = -(zh * zh);
    let small = (zh - z) * (zh + z) + p;
    return t * exp_f32(big) * exp_f32(small);
}

fn erfc_of(z: f32) -> f32 {
    if z < 0.0 {
        return 2.0 - erfc_nonnegative(-z);
    }
    return erfc_nonnegative(z);
}

fn apply(x: f32) -> f32 {
    return 0.5 * x * erfc_of(x * MINUS_SQRT1_2);
}
