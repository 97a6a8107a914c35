// floor_mod_f32: ember-kernels' `FloorModF32` (TFLM's float FLOOR_MOD: `fmod(a, b)`, then
// `+ b` where that is nonzero and of the other sign than b) broadcast (floor_div_mod.wgsl's
// bindings and loop). fmod is exact, and computed exactly here for any finite operands: the
// remainder of ma · 2^(ea - eb) by mb as integers, eight bits of the exponent difference a
// step; the sign fix-up `r + b` is then `(mb - r) · 2^eb`, exact too. Only where |a| < |b|
// and the signs differ is the sum `a + b` rounded, by the device's OpFAdd (correctly
// rounded; a device that flushes subnormals flushes them there). NaN at a zero divisor or
// an infinite dividend, as TFLM's.

fn combine_bits(x: u32, y: u32) -> u32 {
    let xm = x & ~F32_SIGN;
    let ym = y & ~F32_SIGN;
    let x_sign = x & F32_SIGN;
    let y_sign = y & F32_SIGN;
    if xm >= F32_INF || ym > F32_INF || ym == 0u {
        return F32_NAN;
    }
    if xm < ym {
        // fmod(a, b) is a itself (b infinite among them).
        if xm == 0u || x_sign == y_sign {
            return x;
        }
        if ym == F32_INF {
            return y;
        }
        return bitcast<u32>(bitcast<f32>(x) + bitcast<f32>(y));
    }
    let p = float_parts(xm);
    let q = float_parts(ym);
    var rest = p.m % q.m;
    var d = p.e - q.e;
    while d > 0 {
        let k = min(d, 8);
        rest = (rest << u32(k)) % q.m;
        d -= k;
    }
    if rest == 0u {
        // A zero of the dividend's sign, as fmod's, kept by the fix-up.
        return x_sign;
    }
    if x_sign != y_sign {
        rest = q.m - rest;
    }
    return y_sign | magnitude_bits(rest, q.e);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    broadcast_bits(id, count, lane);
}
