// Shared by the int8 window kernels (`conv2d_s8`, `depthwise_conv2d_s8`): build.rs appends
// it after each one's own source. Their bindings, the parameters both read into private
// variables, byte loads, the per-channel output stage and the output pixel's window.
// `transpose_conv_s8` uses its bindings, parameters, loads and output stage too.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> bias: array<i32>;
@group(0) @binding(3) var<storage, read> multipliers: array<i32>;
@group(0) @binding(4) var<storage, read> shifts: array<i32>;
@group(0) @binding(5) var<storage, read_write> output: array<u32>;

// The parameters, read once by `main`.
var<private> IH: u32;
var<private> IW: u32;
var<private> ID: u32;
var<private> FH: u32;
var<private> FW: u32;
var<private> OH: u32;
var<private> OW: u32;
var<private> OD: u32;
var<private> SH: u32;
var<private> SW: u32;
var<private> DH: u32;
var<private> DW: u32;
var<private> PH: i32;
var<private> PW: i32;
var<private> HAS_BIAS: bool;
var<private> IN_OFF: i32;
var<private> OUT_OFF: i32;
var<private> ACT_MIN: i32;
var<private> ACT_MAX: i32;
// Byte offsets of bindings 0 and 1, word offsets of bindings 2..4.
var<private> IN_BASE: u32;
var<private> W_BASE: u32;
var<private> BIAS_BASE: u32;
var<private> MUL_BASE: u32;
var<private> SHIFT_BASE: u32;

// Input byte `b` (absolute byte index in binding 0), sign-extended.
fn input_s8(b: u32) -> i32 {
    return s8_of(input[b / 4u], b % 4u);
}

fn weight_s8(b: u32) -> i32 {
    return s8_of(weights[b / 4u], b % 4u);
}

// Bytes `b..b + 4` of binding 0 as one little-endian word, any alignment.
fn input4(b: u32) -> u32 {
    let q = b / 4u;
    let r = (b % 4u) * 8u;
    let lo = input[q];
    if r == 0u {
        return lo;
    }
    return (lo >> r) | (input[q + 1u] << (32u - r));
}

fn weights4(b: u32) -> u32 {
    let q = b / 4u;
    let r = (b % 4u) * 8u;
    let lo = weights[q];
    if r == 0u {
        return lo;
    }
    return (lo >> r) | (weights[q + 1u] << (32u - r));
}


// Output channel `oc`'s value for the accumulated products `acc`.
fn finish(oc: u32, acc_in: i32) -> i32 {
    var acc = acc_in;
    if HAS_BIAS {
        acc += bias[BIAS_BASE + oc];
    }
    let m = multipliers[MUL_BASE + oc];
    let s = shifts[SHIFT_BASE + oc];
    let v = multiply_by_quantized_multiplier(acc, m, s) + OUT_OFF;
    return clamp_s8(v, ACT_MIN, ACT_MAX);
}

// The pixel `p` (batch, row, column over the output) as the input row index of its
// batch's first row (`b * IH`) and the window's top-left corner.
struct Pixel {
    row0: u32,
    y0: i32,
    x0: i32,
}

fn pixel_of(p: u32) -> Pixel {
    let ox = p % OW;
    let r = p / OW;
    let oy = r % OH;
    let b = r / OH;
    return Pixel(b * IH, i32(oy * SH) - PH, i32(ox * SW) - PW);
}

// Output element `e` from its whole sum (the split path's finish).
fn finish_element(e: u32, sum: i32) -> i32 {
    return finish(e % OD, sum);
}
