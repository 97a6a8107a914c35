// Shared by the int8 window kernels (`conv2d_s8`, `depthwise_conv2d_s8`): build.rs appends
// it after each one's own source. Their bindings, the parameters both read into private
// variables, byte loads, the per-channel output stage, the output pixel's window, and the
// split path, where several invocations share each output word (each kernel's
// `word_partial` gives one invocation's share of a word's four sums).

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

// The four bytes of `w`, sign-extended, byte 0 first.
fn lanes(w: u32) -> vec4<i32> {
    return bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u);
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

var<workgroup> partial: array<vec4<i32>, 64>;

// The split path over the output bytes `start..start + n`: `per_word` invocations (a power of
// two up to 64) share each output word, a workgroup taking 64 / `per_word` consecutive words a
// round. Each adds its share of the word's four sums (`word_partial`); the word's first
// invocation adds the shares in workgroup memory and writes the word, keeping its bytes
// outside the output. Wrapping i32 sums, so the order of the terms does not matter.
fn split_words(id: vec3<u32>, count: vec3<u32>, lane: u32, per_word: u32, start: u32, n: u32) {
    let words = words_of(start, n);
    let group = id.x + count.x * (id.y + count.y * id.z);
    let groups = count.x * count.y * count.z;
    let per_group = 64u / per_word;
    let sub = lane % per_word;
    // Every invocation of the workgroup takes the same rounds (it meets the barriers).
    for (var first = words.first + group * per_group; first <= words.last; first += groups * per_group) {
        let w = first + lane / per_word;
        var acc = vec4<i32>(0);
        if w <= words.last {
            acc = word_partial(w, start, n, sub, per_word);
        }
        partial[lane] = acc;
        workgroupBarrier();
        for (var half = per_word / 2u; half > 0u; half /= 2u) {
            if sub < half {
                partial[lane] += partial[lane + half];
            }
            workgroupBarrier();
        }
        if sub == 0u && w <= words.last {
            let sum = partial[lane];
            var word = output[w];
            for (var l = 0u; l < 4u; l++) {
                let b = w * 4u + l;
                if b >= start && b < start + n {
                    word = with_byte(word, l, finish((b - start) % OD, sum[l]));
                }
            }
            output[w] = word;
        }
        workgroupBarrier();
    }
}
