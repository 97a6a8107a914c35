// Shared by every kernel (build.rs appends it, with the generated constants, after
// common.wgsl): hal-local's `exp_f32`.

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// `2^n` for `n` in -126..=127, from its exponent bits.
fn pow2(n: i32) -> f32 {
    return bitcast<f32>(u32(n + 127) << 23u);
}

// hal-local's `kernels::math::exp_f32`, operation for operation (same constants, same order;
// build.rs decorates every float operation NoContraction so nothing is fused or reassociated).
fn exp_f32(x: f32) -> f32 {
    if is_nan(x) {
        return x;
    }
    if x > EXP_OVERFLOW_ABOVE {
        return bitcast<f32>(0x7f800000u);
    }
    if x < EXP_UNDERFLOW_BELOW {
        return 0.0;
    }
    let nf = (x * EXP_LOG2_E + EXP_ROUND_SHIFTER) - EXP_ROUND_SHIFTER;
    let n = i32(nf);
    let r = (x - nf * EXP_LN2_HI) - nf * EXP_LN2_LO;
    let p = EXP_ONE + r * (EXP_ONE + r * (EXP_C2 + r * (EXP_C3 + r * (EXP_C4
        + r * (EXP_C5 + r * (EXP_C6 + r * EXP_C7))))));
    if n > 127 {
        return p * pow2(127) * pow2(n - 127);
    } else if n < -126 {
        return p * pow2(-126 + 24) * pow2(n + 126 - 24);
    }
    return p * pow2(n);
}
