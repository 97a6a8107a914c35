// softmax_beta_f32: ember-kernels' `SoftmaxF32` (TFLM's reference `Softmax<float>`). Each
// invocation computes whole rows: the row's maximum from `f32::MIN` (NaNs skipped, as
// `std::max`), `e_c = expf((x_c - max) * beta)` written out and summed from 0 in order, then
// each `e_c / sum`. A row is read whole before it is written, so input and output may alias.
//
// The reference's `expf` is `libm::exp` in double precision rounded to `f32`; `expf_ref`
// below reproduces it in single precision with extra-precise (double-`f32`) arithmetic:
// it agrees bit for bit on all but about 1 in 10^5 normal results (those a 1-ulp
// double-rounding case apart); subnormal results may differ by an ulp (or be flushed to
// zero where the device flushes denormals).
//
// Parameter words: 0 outer (rows), 1 depth (a row's elements), 2 beta bits.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

// `2^(j/32)` for `j` in 0..32 as a sum `EXP_T_HI[j] + EXP_T_LO[j]` of two `f32`.
var<private> EXP_T_HI: array<f32, 32> = array<f32, 32>(
    1.0f, 1.0218971967697144f, 1.0442737340927124f, 1.0671404600143433f,
    1.0905077457427979f, 1.114386796951294f, 1.1387885808944702f, 1.1637248992919922f,
    1.1892070770263672f, 1.215247392654419f, 1.2418577671051025f, 1.2690509557724f,
    1.2968395948410034f, 1.3252366781234741f, 1.3542555570602417f, 1.3839099407196045f,
    1.4142135381698608f, 1.4451807737350464f, 1.4768261909484863f, 1.5091644525527954f,
    1.5422108173370361f, 1.5759809017181396f, 1.610490322113037f, 1.6457555294036865f,
    1.6817928552627563f, 1.7186193466186523f, 1.7562521696090698f, 1.7947090864181519f,
    1.8340080976486206f, 1.8741676807403564f, 1.9152065515518188f, 1.9571441411972046f
);
var<private> EXP_T_LO: array<f32, 32> = array<f32, 32>(
    0.0f, -4.811559861650494e-08f, 4.8334701574503924e-08f, -5.9337519786595294e-08f,
    -1.3077539939843064e-08f, -5.435540018083884e-08f, 5.386222312608879e-08f, -4.051441493402308e-08f,
    3.797635272917432e-08f, -3.267394887984665e-08f, 4.496838101886169e-08f, 1.419333317542737e-09f,
    -4.018999533172973e-08f, -3.496373324196611e-08f, -1.0123349269974824e-08f, -5.875577357983275e-08f,
    2.4203234971764687e-08f, 3.324199937537742e-08f, -4.500898853621038e-08f, -2.4959373234878512e-08f,
    8.070904833346049e-09f, -5.661025426206834e-08f, 9.836217174097328e-09f, -5.124972091152813e-08f,
    -2.4755326677450284e-08f, -4.8496175963919086e-08f, -9.235770370707996e-09f, -1.141504490931311e-08f,
    -1.1239277952768134e-08f, -4.663005626071026e-08f, 9.845328108326612e-09f, -1.7021804410433106e-08f
);

// `32 / ln 2`, and `ln 2 / 32` as `L1 + L2 + L3`, `L1` and `L2` of 11 significant bits
// (so `k * L1` and `k * L2` are exact for `|k| < 2^13`).
const EXPF_INV_L: f32 = 46.16624069213867f;
const EXPF_L1: f32 = 0.0216522216796875f;
const EXPF_L2: f32 = 8.620321750640869e-06f;
const EXPF_L3: f32 = 7.391060208306044e-09f;
const EXPF_C3: f32 = 0.1666666716337204f;
const EXPF_C4: f32 = 0.0416666679084301f;
const EXPF_C5: f32 = 0.008333333767950535f;
// The largest `x` whose `expf` is finite, and the smallest whose `expf` is not 0.
const EXPF_MAX_FINITE: f32 = 88.72283172607422f;
const EXPF_MIN_NONZERO: f32 = -103.97207641601562f;

// `a + b` exactly, as the rounded sum and its error (Knuth's two-sum).
struct Pair {
    hi: f32,
    lo: f32,
}

fn two_sum(a: f32, b: f32) -> Pair {
    let s = a + b;
    let bb = s - a;
    let aa = s - bb;
    return Pair(s, (a - aa) + (b - bb));
}

// Veltkamp's split of `a` into two halves of 12 significant bits.
fn split(a: f32) -> Pair {
    let c = 4097.0f * a;
    let h = c - (c - a);
    return Pair(h, a - h);
}

// `a * b` exactly, as the rounded product and its error (Dekker's two-product).
fn two_prod(a: f32, b: f32) -> Pair {
    let p = a * b;
    let x = split(a);
    let y = split(b);
    let e = (((x.hi * y.hi - p) + x.hi * y.lo) + x.lo * y.hi) + x.lo * y.lo;
    return Pair(p, e);
}

// `libm::exp(f64::from(x)) as f32`: `x = k ln2/32 + r`, `|r| <= ln2/64` held as two `f32`,
// `e^x = 2^(k/32) e^r` summed in double-`f32` and rounded once.
fn expf_ref(x: f32) -> f32 {
    if is_nan(x) {
        return x;
    }
    if x > EXPF_MAX_FINITE {
        return bitcast<f32>(0x7f800000u);
    }
    if x < EXPF_MIN_NONZERO {
        return 0.0f;
    }
    let k = round(x * EXPF_INV_L);
    let ki = i32(k);
    let j = u32(ki & 31);
    let n = ki >> 5u;
    let a = two_sum(x, -(k * EXPF_L1));
    let b = two_sum(a.hi, -(k * EXPF_L2));
    let r = two_sum(b.hi, (b.lo + a.lo) - k * EXPF_L3);
    // e^r - 1 - r.hi, to well below an ulp of the result.
    let p = (r.hi * r.hi) * (0.5f + r.hi * (EXPF_C3 + r.hi * (EXPF_C4 + r.hi * EXPF_C5)));
    let t = r.lo + (p + r.hi * r.lo);
    let th = EXP_T_HI[j];
    let tl = EXP_T_LO[j];
    // (th + tl)(1 + r.hi + t) = th + th r.hi + th t + tl (1 + r.hi + t).
    let m = two_prod(th, r.hi);
    let s = two_sum(th, m.hi);
    let tail = ((s.lo + m.lo) + th * t) + (tl + tl * (r.hi + t));
    let v = s.hi + tail;
    if n > 127 {
        return v * pow2(127) * pow2(n - 127);
    } else if n < -126 {
        return v * pow2(n + 64) * pow2(-64);
    }
    return v * pow2(n);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let outer = param(0u);
    let depth = param(1u);
    let beta = bitcast<f32>(param(2u));
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var row = me.index; row < outer; row += me.total) {
        let i = in0 + row * depth;
        let o = out0 + row * depth;
        // f32::MIN; `std::max(max, x)` keeps max unless max < x.
        var mx = bitcast<f32>(0xff7fffffu);
        for (var c = 0u; c < depth; c++) {
            let x = input[i + c];
            mx = select(mx, x, mx < x);
        }
        var sum = 0.0f;
        for (var c = 0u; c < depth; c++) {
            let e = expf_ref((input[i + c] - mx) * beta);
            output[o + c] = e;
            sum += e;
        }
        for (var c = 0u; c < depth; c++) {
            output[o + c] = div_rn(output[o + c], sum);
        }
    }
}
