// Shared by sin_f32 and cos_f32: build.rs appends this file to each. Sine and cosine to
// within a few ulp of `sinf`/`cosf` for |x| below 8192 (Cody and Waite's reduction by pi/4
// in three parts, then Cephes' single-precision polynomials on [-pi/4, pi/4]); the device's
// own `sin` and `cos` are only held to 2^-11 absolute. Beyond 8192 the reduction loses
// digits (the results stay within [-1, 1]); NaN and infinities give NaN.

const FOUR_OVER_PI: f32 = 1.27323954473516;
const PI_OVER_4_A: f32 = 0.78515625;
const PI_OVER_4_B: f32 = 2.4187564849853515625e-4;
const PI_OVER_4_C: f32 = 3.77489497744594108e-8;

// The reduced argument and its octant: |x| - j pi/4 with j even, and j mod 8.
struct Reduced {
    r: f32,
    octant: u32,
}

fn reduce(a: f32) -> Reduced {
    var j = u32(a * FOUR_OVER_PI);
    var y = f32(j);
    if (j & 1u) == 1u {
        j += 1u;
        y += 1.0;
    }
    let r = ((a - y * PI_OVER_4_A) - y * PI_OVER_4_B) - y * PI_OVER_4_C;
    return Reduced(r, j & 7u);
}

fn sin_poly(r: f32) -> f32 {
    let z = r * r;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}

fn cos_poly(r: f32) -> f32 {
    let z = r * r;
    return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2)
        * z * z - 0.5 * z + 1.0;
}

fn sin_f32(x: f32) -> f32 {
    if is_nan(x) || abs(x) == bitcast<f32>(0x7f800000u) {
        return bitcast<f32>(0x7fc00000u);
    }
    var negative = x < 0.0;
    let reduced = reduce(abs(x));
    var octant = reduced.octant;
    if octant > 3u {
        negative = !negative;
        octant -= 4u;
    }
    var y = sin_poly(reduced.r);
    if octant == 1u || octant == 2u {
        y = cos_poly(reduced.r);
    }
    if x == 0.0 {
        return x;
    }
    return select(y, -y, negative);
}

fn cos_f32(x: f32) -> f32 {
    if is_nan(x) || abs(x) == bitcast<f32>(0x7f800000u) {
        return bitcast<f32>(0x7fc00000u);
    }
    let reduced = reduce(abs(x));
    var octant = reduced.octant;
    var negative = false;
    if octant > 3u {
        octant -= 4u;
        negative = !negative;
    }
    if octant > 1u {
        negative = !negative;
    }
    var y = cos_poly(reduced.r);
    if octant == 1u || octant == 2u {
        y = sin_poly(reduced.r);
    }
    return select(y, -y, negative);
}
