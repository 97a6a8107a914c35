// depthwise_conv2d_s8: ember-kernels' `DepthwiseConv2dS8` (TFLM's reference
// `DepthwiseConvPerChannel`), any depth multiplier: output channel `ic * multiplier + m`
// reads input channel `ic`; the filter is `[1, fh, fw, out_depth]`. Each invocation computes
// whole words of the output (up to 4 outputs), keeping the bytes of a word that lie outside
// the output. Taps outside the input contribute nothing; products accumulate in wrapping
// i32 (their order does not change the sum), then bias, requantization, offset and clamp.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 depth_multiplier, 5 filter_height, 6 filter_width, 7 output_height, 8 output_width,
// 9 stride_h, 10 stride_w, 11 dilation_h, 12 dilation_w, 13 pad_h, 14 pad_w, 15 has_bias,
// 16 input_offset, 17 output_offset, 18 act_min, 19 act_max.

// Parameters of its own (the rest, the bindings and the loads are in window_s8.wgsl).
var<private> MULT: u32;

// Invocations that share each output word (as `ops.rs`'s `depthwise_lanes`): 8 where the
// output takes at most 8,192 words and the filter at least 8 taps, otherwise 1.
fn split_lanes(words: u32, taps: u32) -> u32 {
    if words <= 8192u && taps >= 8u {
        return 8u;
    }
    return 1u;
}

// The four input values output channels `oc0..oc0 + 4` read at input byte `ib` (channel
// `oc0 / MULT` of a pixel), offset.
fn inputs4(ib: u32, oc0: u32) -> vec4<i32> {
    var xv: vec4<i32>;
    if MULT == 1u {
        xv = lanes(input4(ib));
    } else {
        let ic0 = oc0 / MULT;
        xv = vec4<i32>(
            input_s8(ib),
            input_s8(ib + (oc0 + 1u) / MULT - ic0),
            input_s8(ib + (oc0 + 2u) / MULT - ic0),
            input_s8(ib + (oc0 + 3u) / MULT - ic0),
        );
    }
    return xv + vec4<i32>(IN_OFF);
}

// Invocation `sub` of `per_word`' share of output word `w`'s sums (the split path): filter taps
// `sub`, `sub + per_word`, ..., each skipped where it falls outside the input.
fn word_partial(w: u32, start: u32, n: u32, sub: u32, per_word: u32) -> vec4<i32> {
    let taps = FH * FW;
    var acc = vec4<i32>(0);
    let b0 = w * 4u;
    if b0 >= start && b0 + 4u <= start + n && (b0 - start) % OD + 4u <= OD {
        let e0 = b0 - start;
        let oc0 = e0 % OD;
        let px = pixel_of(e0 / OD);
        for (var t = sub; t < taps; t += per_word) {
            let y = px.y0 + i32((t / FW) * DH);
            let x = px.x0 + i32((t % FW) * DW);
            if y < 0 || y >= i32(IH) || x < 0 || x >= i32(IW) {
                continue;
            }
            let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + oc0 / MULT;
            acc += inputs4(ib, oc0) * lanes(weights4(W_BASE + t * OD + oc0));
        }
        return acc;
    }
    return bytes_partial(w, start, n, sub, per_word);
}

// Invocation `sub` of `per_word`'s share of output `e`'s sum: filter taps `sub`,
// `sub + per_word`, ..., each skipped where it falls outside the input.
fn partial_sum(e: u32, sub: u32, per_word: u32) -> i32 {
    let oc = e % OD;
    let px = pixel_of(e / OD);
    var acc = 0;
    for (var t = sub; t < FH * FW; t += per_word) {
        let y = px.y0 + i32((t / FW) * DH);
        let x = px.x0 + i32((t % FW) * DW);
        if y < 0 || y >= i32(IH) || x < 0 || x >= i32(IW) {
            continue;
        }
        let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + oc / MULT;
        acc += (input_s8(ib) + IN_OFF) * weight_s8(W_BASE + t * OD + oc);
    }
    return acc;
}

// Output element `e` alone, by the reference loops.
fn element(e: u32) -> i32 {
    let oc = e % OD;
    let ic = oc / MULT;
    let px = pixel_of(e / OD);
    var acc = 0;
    for (var fy = 0u; fy < FH; fy++) {
        let y = px.y0 + i32(fy * DH);
        if y < 0 || y >= i32(IH) {
            continue;
        }
        for (var fx = 0u; fx < FW; fx++) {
            let x = px.x0 + i32(fx * DW);
            if x < 0 || x >= i32(IW) {
                continue;
            }
            let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + ic;
            let fb = W_BASE + (fy * FW + fx) * OD + oc;
            acc += (input_s8(ib) + IN_OFF) * weight_s8(fb);
        }
    }
    return finish(oc, acc);
}

// Output channels `oc0..oc0 + 4` of pixel `p` (all four inside the pixel), as one word.
fn four(p: u32, oc0: u32) -> u32 {
    let px = pixel_of(p);
    var acc = vec4<i32>(0);
    // Each lane's input channel, relative to the first.
    let ic0 = oc0 / MULT;
    let rel = vec4<u32>(0u, (oc0 + 1u) / MULT, (oc0 + 2u) / MULT, (oc0 + 3u) / MULT) - vec4<u32>(0u, ic0, ic0, ic0);
    let off = vec4<i32>(IN_OFF);
    for (var fy = 0u; fy < FH; fy++) {
        let y = px.y0 + i32(fy * DH);
        if y < 0 || y >= i32(IH) {
            continue;
        }
        for (var fx = 0u; fx < FW; fx++) {
            let x = px.x0 + i32(fx * DW);
            if x < 0 || x >= i32(IW) {
                continue;
            }
            let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + ic0;
            let wv = lanes(weights4(W_BASE + (fy * FW + fx) * OD + oc0));
            var xv: vec4<i32>;
            if MULT == 1u {
                xv = lanes(input4(ib));
            } else {
                xv = vec4<i32>(
                    input_s8(ib),
                    input_s8(ib + rel.y),
                    input_s8(ib + rel.z),
                    input_s8(ib + rel.w),
                );
            }
            acc += (xv + off) * wv;
        }
    }
    var word = 0u;
    word = with_byte(word, 0u, finish(oc0, acc.x));
    word = with_byte(word, 1u, finish(oc0 + 1u, acc.y));
    word = with_byte(word, 2u, finish(oc0 + 2u, acc.z));
    word = with_byte(word, 3u, finish(oc0 + 3u, acc.w));
    return word;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(7u) * param(8u) * param(3u) * param(4u);
    if n == 0u {
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
    OD = ID * MULT;
    SH = param(9u);
    SW = param(10u);
    DH = param(11u);
    DW = param(12u);
    PH = param_i32(13u);
    PW = param_i32(14u);
    HAS_BIAS = param(15u) != 0u;
    IN_OFF = param_i32(16u);
    OUT_OFF = param_i32(17u);
    ACT_MIN = param_i32(18u);
    ACT_MAX = param_i32(19u);
    IN_BASE = base_byte(0u);
    W_BASE = base_byte(1u);
    BIAS_BASE = base_byte(2u) / 4u;
    MUL_BASE = base_byte(3u) / 4u;
    SHIFT_BASE = base_byte(4u) / 4u;

    let start = base_byte(5u);
    // Invocations share each word where there are few (the driver's `depthwise_lanes`
    // makes the same choice for the grid).
    let per_word = split_lanes((n + 3u) / 4u, FH * FW);
    if per_word > 1u {
        split_words(id, count, lane, per_word, start, n);
        return;
    }
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        let b0 = w * 4u;
        if b0 >= start && b0 + 4u <= start + n {
            let e0 = b0 - start;
            let oc0 = e0 % OD;
            if oc0 + 4u <= OD {
                output[w] = four(e0 / OD, oc0);
                continue;
            }
        }
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = b0 + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start));
            }
        }
        output[w] = word;
    }
}
