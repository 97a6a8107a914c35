// floor_div_f32: ember-kernels' `FloorDivF32` (TFLM's float FLOOR_DIV,
// `floor(double(a) / double(b))` rounded to f32) broadcast (floor_div_mod.wgsl's bindings and
// loop). The quotient's floor is exact, by long division of the mantissas as integers: for
// |a / b| < 2^30 the integer floor, converted to f32 (rounded to nearest even, as the
// reference's double rounds to float). Equal to TFLM's for |a / b| < 2^29; from 2^29 TFLM's
// double quotient may round onto an integer the exact one lies just beside, and from 2^30
// this falls back to the f32 quotient (div_rn.wgsl: correctly rounded where quotient and
// divisor lie within 1e-30..1e30), every f32 there an integer: TFLM's but where the
// quotient lies within 1 of a midpoint between two floats (spaced 128 or more apart), or
// where div_rn leaves Vulkan's quotient uncorrected. IEEE's at a zero divisor (TFLM fails
// its invoke there): an infinity of the operands' signs, NaN for 0 / 0.

fn combine_bits(x: u32, y: u32) -> u32 {
    let xm = x & ~F32_SIGN;
    let ym = y & ~F32_SIGN;
    let sign = (x ^ y) & F32_SIGN;
    if xm > F32_INF || ym > F32_INF || (xm == 0u && ym == 0u) || (xm == F32_INF && ym == F32_INF) {
        return F32_NAN;
    }
    if xm == F32_INF || ym == 0u {
        return sign | F32_INF;
    }
    if xm < ym {
        // |a / b| < 1 (b infinite among them): a zero of the quotient's sign, or -1 for a
        // negative finite quotient, which a double never rounds to zero.
        if xm == 0u || sign == 0u || ym == F32_INF {
            return sign;
        }
        return bitcast<u32>(-1.0f);
    }
    // |a| >= |b|: a = ma · 2^ea, b = mb · 2^eb, both mantissas in [2^23, 2^24), ea >= eb.
    let p = float_parts(xm);
    let q = float_parts(ym);
    let d = p.e - q.e;
    if d > 30 {
        return bitcast<u32>(floor(div_rn(bitcast<f32>(x), bitcast<f32>(y))));
    }
    // The truncated quotient of ma · 2^d by mb, a bit at a time, and its remainder.
    var quotient = select(0u, 1u, p.m >= q.m);
    var rest = p.m - quotient * q.m;
    for (var i = 0; i < d; i++) {
        rest = rest << 1u;
        quotient = quotient << 1u;
        if rest >= q.m {
            rest -= q.m;
            quotient |= 1u;
        }
    }
    // The floor: a negative inexact quotient one further from zero.
    if sign != 0u && rest != 0u {
        quotient += 1u;
    }
    return sign | bitcast<u32>(f32(quotient));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    broadcast_bits(id, count, lane);
}
