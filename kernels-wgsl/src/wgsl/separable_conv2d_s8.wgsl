// separable_conv2d_s8: ember-kernels' `SeparableConv2dS8`, an int8 depthwise convolution
// (filter `[1, fh, fw, middle]`, output channel `ic * multiplier + m` reading input channel
// `ic`) and the 1×1 convolution over its int8 result (filter `[out_depth, middle]`) in one
// dispatch. The middle values never reach memory: each workgroup takes a tile (a few output
// pixels, a chunk of their output channels), computes the tile's middle values into
// workgroup memory as the depthwise convolution would store them, then the tile's outputs
// from them. Products accumulate in wrapping i32 (their order does not change the sum),
// then bias, requantization, offset and clamp, as the two ops apart.
//
// Both layers are latency-bound at the sizes models have, so each invocation's chain of
// dependent loads is kept short: several invocations share each middle word's taps and each
// output word's sum (added in workgroup memory).
//
// Each output word has one writer: the tile that holds the word's first output byte. Where
// the output depth and offset are multiples of 4, tiles split the channels too and their
// words never straddle; otherwise a tile holds all channels and the middle values of the
// pixels past its own that the bytes of its last word reach (up to 3). Bytes outside the
// output are kept.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 depth_multiplier, 5 filter_height, 6 filter_width, 7 output_height, 8 output_width,
// 9 stride_h, 10 stride_w, 11 dilation_h, 12 dilation_w, 13 pad_h, 14 pad_w, 15 has_bias,
// 16 input_offset, 17 middle_offset, 18 middle_min, 19 middle_max (the depthwise stage),
// 20 output_depth, 21 pointwise input_offset, 22 output_offset, 23 act_min, 24 act_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> depthwise: array<u32>;
@group(0) @binding(2) var<storage, read> pointwise: array<u32>;
@group(0) @binding(3) var<storage, read> first_stage: array<i32>;
@group(0) @binding(4) var<storage, read> second_stage: array<i32>;
@group(0) @binding(5) var<storage, read_write> output: array<u32>;

// Invocations of a workgroup.
const LANES: u32 = 64u;
// Words of middle values a workgroup holds (4 KiB): ember-kernels' `MAX_MIDDLE_DEPTH` (1,024)
// bytes for each of at least 4 pixels (a tile's, and up to 3 past it), each pixel's from a
// word boundary.
const MIDDLE_WORDS: u32 = 1024u;
var<workgroup> middle: array<u32, 1024>;
var<workgroup> partial: array<vec4<i32>, 64>;

var<private> IH: u32;
var<private> IW: u32;
var<private> ID: u32;
var<private> MULT: u32;
var<private> FH: u32;
var<private> FW: u32;
var<private> OH: u32;
var<private> OW: u32;
var<private> SH: u32;
var<private> SW: u32;
var<private> DH: u32;
var<private> DW: u32;
var<private> PH: i32;
var<private> PW: i32;
var<private> HAS_BIAS: bool;
var<private> IN_OFF: i32;
var<private> MID_OFF: i32;
var<private> MID_MIN: i32;
var<private> MID_MAX: i32;
var<private> OD: u32;
var<private> PW_IN_OFF: i32;
var<private> OUT_OFF: i32;
var<private> ACT_MIN: i32;
var<private> ACT_MAX: i32;
// Middle channels, and the words each pixel's take.
var<private> MD: u32;
var<private> MW: u32;
// Byte offsets of bindings 0..2, word offsets of bindings 3 and 4.
var<private> IN_BASE: u32;
var<private> DW_BASE: u32;
var<private> PW_BASE: u32;
var<private> FIRST_BASE: u32;
var<private> SECOND_BASE: u32;

fn input_s8(b: u32) -> i32 {
    return s8_of(input[b / 4u], b % 4u);
}

fn input4(b: u32) -> u32 {
    let q = b / 4u;
    let r = (b % 4u) * 8u;
    if r == 0u {
        return input[q];
    }
    return (input[q] >> r) | (input[q + 1u] << (32u - r));
}

fn depthwise_s8(b: u32) -> i32 {
    return s8_of(depthwise[b / 4u], b % 4u);
}

fn depthwise4(b: u32) -> u32 {
    let q = b / 4u;
    let r = (b % 4u) * 8u;
    if r == 0u {
        return depthwise[q];
    }
    return (depthwise[q] >> r) | (depthwise[q + 1u] << (32u - r));
}

fn pointwise_s8(b: u32) -> i32 {
    return s8_of(pointwise[b / 4u], b % 4u);
}

fn pointwise4(b: u32) -> u32 {
    let q = b / 4u;
    let r = (b % 4u) * 8u;
    if r == 0u {
        return pointwise[q];
    }
    return (pointwise[q] >> r) | (pointwise[q + 1u] << (32u - r));
}


// Word `i` of the first output stage (binding 3), then of the second (binding 4).
fn first_word(i: u32) -> i32 {
    return first_stage[FIRST_BASE + i];
}

fn second_word(i: u32) -> i32 {
    return second_stage[SECOND_BASE + i];
}

// Middle channel `c`'s value for its accumulated products, as the depthwise op stores it.
fn finish_middle(c: u32, acc_in: i32) -> i32 {
    var acc = acc_in;
    if HAS_BIAS {
        acc += first_word(c);
    }
    let v = multiply_by_quantized_multiplier(acc, first_word(MD + c), first_word(2u * MD + c));
    return clamp_s8(v + MID_OFF, MID_MIN, MID_MAX);
}

// Output channel `oc`'s value for its accumulated products.
fn finish_output(oc: u32, acc: i32) -> i32 {
    let v = multiply_by_quantized_multiplier(
        acc + second_word(oc),
        second_word(OD + oc),
        second_word(2u * OD + oc),
    );
    return clamp_s8(v + OUT_OFF, ACT_MIN, ACT_MAX);
}

// Invocation `sub` of `per_word`'s share of the products of middle channels `4k..4k + 4`
// (those below MD) of output pixel `p`: filter taps `sub`, `sub + per_word`, ... Taps
// outside the input add nothing; their loads read the input's first word instead, so no
// branch separates one tap's loads from the next's.
fn middle_partial(p: u32, k: u32, sub: u32, per_word: u32) -> vec4<i32> {
    let ox = p % OW;
    let oy = (p / OW) % OH;
    let row0 = (p / (OW * OH)) * IH;
    let y0 = i32(oy * SH) - PH;
    let x0 = i32(ox * SW) - PW;
    let c0 = 4u * k;
    let n = min(4u, MD - c0);
    var acc = vec4<i32>(0);
    for (var t = sub; t < FH * FW; t += per_word) {
        let fy = t / FW;
        let fx = t % FW;
        let y = y0 + i32(fy * DH);
        let x = x0 + i32(fx * DW);
        let inside = y >= 0 && y < i32(IH) && x >= 0 && x < i32(IW);
        let ib = select(IN_BASE, ((row0 + u32(y)) * IW + u32(x)) * ID + IN_BASE, inside);
        let fb = DW_BASE + t * MD + c0;
        var xv: vec4<i32>;
        var wv: vec4<i32>;
        if n == 4u && MULT == 1u {
            xv = lanes(input4(ib + select(0u, c0, inside)));
            wv = lanes(depthwise4(fb));
        } else {
            for (var j = 0u; j < 4u; j++) {
                let c = min(c0 + j, MD - 1u);
                xv[j] = input_s8(ib + select(0u, c / MULT, inside));
                wv[j] = select(0, depthwise_s8(DW_BASE + t * MD + c), j < n);
            }
        }
        acc += select(vec4<i32>(0), (xv + vec4<i32>(IN_OFF)) * wv, vec4<bool>(inside));
    }
    return acc;
}

// Middle channels `4k..4k + 4` (those below MD; the rest 0) for their summed products.
fn middle_word(k: u32, acc: vec4<i32>) -> u32 {
    let c0 = 4u * k;
    var word = 0u;
    for (var j = 0u; j < min(4u, MD - c0); j++) {
        word = with_byte(word, j, finish_middle(c0 + j, acc[j]));
    }
    return word;
}

// Adds the `per_word` consecutive entries of `partial` from each multiple of `per_word` into
// that entry. Every invocation of the workgroup calls it (it meets the barriers).
fn reduce_partials(lane: u32, per_word: u32) {
    workgroupBarrier();
    let sub = lane % per_word;
    for (var half = per_word / 2u; half > 0u; half /= 2u) {
        if sub < half {
            partial[lane] += partial[lane + half];
        }
        workgroupBarrier();
    }
}

// Middle channel `c` of the tile's pixel `lp`, offset for the pointwise products.
fn middle_value(lp: u32, c: u32) -> i32 {
    return s8_of(middle[lp * MW + c / 4u], c % 4u) + PW_IN_OFF;
}

// Invocation `sub` of `per_word`'s share of the sum of output channel `oc` of the tile's
// pixel `lp`: middle channels `4k..4k + 4` for k = sub, sub + per_word, ...
fn partial_one(lp: u32, oc: u32, sub: u32, per_word: u32) -> i32 {
    let f = PW_BASE + oc * MD;
    var acc = 0;
    for (var k = sub; k < MW; k += per_word) {
        let c0 = 4u * k;
        for (var c = c0; c < min(c0 + 4u, MD); c++) {
            acc += middle_value(lp, c) * pointwise_s8(f + c);
        }
    }
    return acc;
}

// The same for output channels `oc0..oc0 + 4` at once (the middle depth a multiple of 4).
fn partial_four(lp: u32, oc0: u32, sub: u32, per_word: u32) -> vec4<i32> {
    let f = PW_BASE + oc0 * MD;
    var acc = vec4<i32>(0);
    for (var k = sub; k < MW; k += per_word) {
        let xv = lanes(middle[lp * MW + k]) + vec4<i32>(PW_IN_OFF);
        let c = f + 4u * k;
        acc.x += dot(xv, lanes(pointwise4(c)));
        acc.y += dot(xv, lanes(pointwise4(c + MD)));
        acc.z += dot(xv, lanes(pointwise4(c + 2u * MD)));
        acc.w += dot(xv, lanes(pointwise4(c + 3u * MD)));
    }
    return acc;
}

// The tile shape, as ops.rs's `separable_tiles` computes it for the grid.
struct Tiling {
    // Invocations sharing one output word's sum: about 2 middle words each, at most 32.
    per_word: u32,
    // Output channels per tile: all, or (`aligned`) a multiple of 4.
    channels: u32,
    // Pixels per tile.
    pixels: u32,
}

fn tiling(aligned: bool) -> Tiling {
    let per_word = min(1u << firstLeadingBit(max(MW / 2u, 1u)), 32u);
    let words = LANES / per_word;
    let channels = select(OD, 4u * words, aligned && OD > 4u * words);
    let pixels = clamp(words / ((channels + 3u) / 4u), 1u, MIDDLE_WORDS / MW - past(aligned));
    return Tiling(per_word, channels, pixels);
}

// Pixels past a tile whose middle values it holds: those the 3 bytes after its last output
// byte can reach, where its last word may straddle into them.
fn past(aligned: bool) -> u32 {
    return select((3u + OD - 1u) / OD, 0u, aligned);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let pixels = param(0u) * param(7u) * param(8u);
    OD = param(20u);
    if pixels == 0u || OD == 0u {
        return;
    }
    IH = param(1u);
    IW = param(2u);
    ID = param(3u);
    MULT = param(4u);
    FH = param(5u);
    FW = param(6u);
    OH = param(7u);
    OW = param(8u);
    SH = param(9u);
    SW = param(10u);
    DH = param(11u);
    DW = param(12u);
    PH = param_i32(13u);
    PW = param_i32(14u);
    HAS_BIAS = param(15u) != 0u;
    IN_OFF = param_i32(16u);
    MID_OFF = param_i32(17u);
    MID_MIN = param_i32(18u);
    MID_MAX = param_i32(19u);
    PW_IN_OFF = param_i32(21u);
    OUT_OFF = param_i32(22u);
    ACT_MIN = param_i32(23u);
    ACT_MAX = param_i32(24u);
    MD = ID * MULT;
    MW = (MD + 3u) / 4u;
    IN_BASE = base_byte(0u);
    DW_BASE = base_byte(1u);
    PW_BASE = base_byte(2u);
    FIRST_BASE = base_byte(3u) / 4u;
    SECOND_BASE = base_byte(4u) / 4u;
    let start = base_byte(5u);
    let end = start + pixels * OD;

    // Aligned: each tile's words are those of its pixels' channel chunks, one segment per
    // pixel. Otherwise one segment per tile, all channels of its pixels.
    let aligned = start % 4u == 0u && OD % 4u == 0u;
    let t = tiling(aligned);
    let chunks = (OD + t.channels - 1u) / t.channels;
    let tiles = ((pixels + t.pixels - 1u) / t.pixels) * chunks;
    let slots = select((t.pixels * OD + 3u) / 4u + 1u, t.channels / 4u, aligned);
    let taps = FH * FW;
    let group = id.x + count.x * (id.y + count.y * id.z);
    let groups = count.x * count.y * count.z;
    // Every invocation of the workgroup takes the same tiles and rounds (it meets the
    // barriers).
    for (var tile = group; tile < tiles; tile += groups) {
        let p0 = (tile / chunks) * t.pixels;
        let np = min(t.pixels, pixels - p0);
        let oc_lo = (tile % chunks) * t.channels;
        let oc_hi = min(oc_lo + t.channels, OD);
        let held = min(np + past(aligned), pixels - p0);
        // The middle words, invocations sharing each one's taps where there are few.
        let items = held * MW;
        let tap_share = min(1u << firstLeadingBit(max(LANES / items, 1u)), min(8u, 1u << firstLeadingBit(taps)));
        let tap_sub = lane % tap_share;
        for (var first = 0u; first < items; first += LANES / tap_share) {
            let i = first + lane / tap_share;
            var acc = vec4<i32>(0);
            if i < items {
                acc = middle_partial(p0 + i / MW, i % MW, tap_sub, tap_share);
            }
            partial[lane] = acc;
            reduce_partials(lane, tap_share);
            if tap_sub == 0u && i < items {
                middle[i] = middle_word(i % MW, partial[lane]);
            }
            workgroupBarrier();
        }
        let sub = lane % t.per_word;
        let per_round = LANES / t.per_word;
        let total = select(1u, np, aligned) * slots;
        for (var first = 0u; first < total; first += per_round) {
            let slot = first + lane / t.per_word;
            let segment = slot / slots;
            var lo = start + p0 * OD;
            var hi = lo + np * OD;
            if aligned {
                lo = start + (p0 + segment) * OD + oc_lo;
                hi = lo + (oc_hi - oc_lo);
            }
            // The segment's words whose first output byte it holds.
            let w = select(lo / 4u + 1u, lo / 4u, lo == start || lo % 4u == 0u) + slot % slots;
            let valid = slot < total && w * 4u < hi;
            let b0 = w * 4u;
            var acc = vec4<i32>(0);
            if valid {
                let e0 = b0 - start;
                if b0 >= start && b0 + 4u <= end && e0 % OD + 4u <= OD && MD % 4u == 0u {
                    acc = partial_four(e0 / OD - p0, e0 % OD, sub, t.per_word);
                } else {
                    for (var l = 0u; l < 4u; l++) {
                        let b = b0 + l;
                        if b >= start && b < end {
                            let e = b - start;
                            acc[l] = partial_one(e / OD - p0, e % OD, sub, t.per_word);
                        }
                    }
                }
            }
            partial[lane] = acc;
            reduce_partials(lane, t.per_word);
            if sub == 0u && valid {
                let sum = partial[lane];
                let whole = b0 >= start && b0 + 4u <= end;
                var word = select(output[w], 0u, whole);
                for (var l = 0u; l < 4u; l++) {
                    let b = b0 + l;
                    if b >= start && b < end {
                        word = with_byte(word, l, finish_output((b - start) % OD, sum[l]));
                    }
                }
                output[w] = word;
            }
            workgroupBarrier();
        }
    }
}
