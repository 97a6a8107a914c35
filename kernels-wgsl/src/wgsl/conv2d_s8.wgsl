// conv2d_s8: ember-kernels' `Conv2dS8` (TFLM's reference `ConvPerChannel`, grouped
// convolution included), the filter OHWI (`[out_depth, fh, fw, filter_depth]`) or, where
// `filter_hwio`, HWIO (`[fh, fw, in_depth, out_depth]`, no groups). Each invocation computes
// whole words of the output (up to 4 outputs), keeping the bytes of a word that lie outside
// the output. Taps outside the input contribute nothing; products accumulate in wrapping
// i32 (their order does not change the sum), then bias, requantization, offset and clamp.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 filter_height, 5 filter_width, 6 filter_depth, 7 output_height, 8 output_width,
// 9 output_depth, 10 stride_h, 11 stride_w, 12 dilation_h, 13 dilation_w, 14 pad_h,
// 15 pad_w, 16 has_bias, 17 input_offset, 18 output_offset, 19 act_min, 20 act_max,
// 21 filter_hwio.

// Invocations that share each output word (as `ops.rs`'s `conv2d_lanes`), so that each
// takes about 8 taps in chunks of four channels, or 2 taps one at a time where the summed
// depth (`depth`) is not a multiple of 4: the largest power of two at most `taps / 8` (or
// `taps / 2`), up to 64, where the output takes at most 8,192 words and that is at least 4;
// otherwise 1.
fn split_lanes(words: u32, taps: u32, depth: u32) -> u32 {
    let share = select(taps / 2u, taps / 8u, depth % 4u == 0u);
    if words > 8192u || share < 4u {
        return 1u;
    }
    return min(1u << firstLeadingBit(share), 64u);
}

// Parameters of its own (the rest, the bindings and the loads are in window_s8.wgsl).
var<private> FD: u32;
var<private> HWIO: bool;
// Output channels per group.
var<private> PER_GROUP: u32;

// Output element `e` alone, by the reference loops.
fn element(e: u32) -> i32 {
    let oc = e % OD;
    let px = pixel_of(e / OD);
    var acc = 0;
    if HWIO {
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
                let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID;
                var fb = W_BASE + (fy * FW + fx) * ID * OD + oc;
                for (var ic = 0u; ic < ID; ic++) {
                    acc += (input_s8(ib + ic) + IN_OFF) * weight_s8(fb);
                    fb += OD;
                }
            }
        }
    } else {
        let channel0 = (oc / PER_GROUP) * FD;
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
                let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + channel0;
                let fb = W_BASE + ((oc * FH + fy) * FW + fx) * FD;
                for (var c = 0u; c < FD; c++) {
                    acc += (input_s8(ib + c) + IN_OFF) * weight_s8(fb + c);
                }
            }
        }
    }
    return finish(oc, acc);
}

// This invocation's share of output `e`'s sum: taps `lane`, `lane + per_word`, ... of the
// window flattened as (fy, fx, c), each skipped where it falls outside the input.
fn partial_sum(e: u32, lane: u32, per_word: u32) -> i32 {
    let oc = e % OD;
    let px = pixel_of(e / OD);
    let taps = FH * FW * FD;
    let channel0 = select((oc / PER_GROUP) * FD, 0u, HWIO);
    var acc = 0;
    for (var r = lane; r < taps; r += per_word) {
        let c = r % FD;
        let fx = (r / FD) % FW;
        let fy = r / (FD * FW);
        let y = px.y0 + i32(fy * DH);
        let x = px.x0 + i32(fx * DW);
        if y < 0 || y >= i32(IH) || x < 0 || x >= i32(IW) {
            continue;
        }
        let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + channel0 + c;
        var fb = W_BASE + ((oc * FH + fy) * FW + fx) * FD + c;
        if HWIO {
            fb = W_BASE + ((fy * FW + fx) * ID + c) * OD + oc;
        }
        acc += (input_s8(ib) + IN_OFF) * weight_s8(fb);
    }
    return acc;
}

// This invocation's share of the sums of output channels `oc0..oc0 + 4` of pixel `p` (all
// four inside the pixel and, OHWI, in one group): the window's taps in chunks of four
// channels, chunks `lane`, `lane + per_word`, ... of the window flattened as (fy, fx, chunk). The
// channels summed over (the filter depth, or the input depth where HWIO) must be a multiple
// of 4.
fn partial_four(p: u32, oc0: u32, lane: u32, per_word: u32) -> vec4<i32> {
    let px = pixel_of(p);
    let depth = select(FD, ID, HWIO);
    let per = depth / 4u;
    let chunks = FH * FW * per;
    let channel0 = select((oc0 / PER_GROUP) * FD, 0u, HWIO);
    let row_stride = FH * FW * FD;
    var acc = vec4<i32>(0);
    for (var r = lane; r < chunks; r += per_word) {
        let c = (r % per) * 4u;
        let t = r / per;
        let fx = t % FW;
        let fy = t / FW;
        let y = px.y0 + i32(fy * DH);
        let x = px.x0 + i32(fx * DW);
        if y < 0 || y >= i32(IH) || x < 0 || x >= i32(IW) {
            continue;
        }
        let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + channel0 + c;
        let xv = lanes(input4(ib)) + vec4<i32>(IN_OFF);
        if HWIO {
            // One input value meets four contiguous weights.
            let fb = W_BASE + ((fy * FW + fx) * ID + c) * OD + oc0;
            acc += xv.x * lanes(weights4(fb));
            acc += xv.y * lanes(weights4(fb + OD));
            acc += xv.z * lanes(weights4(fb + 2u * OD));
            acc += xv.w * lanes(weights4(fb + 3u * OD));
        } else {
            // Four filter rows over the same input channels.
            let f = W_BASE + ((oc0 * FH + fy) * FW + fx) * FD + c;
            acc.x += dot(xv, lanes(weights4(f)));
            acc.y += dot(xv, lanes(weights4(f + row_stride)));
            acc.z += dot(xv, lanes(weights4(f + 2u * row_stride)));
            acc.w += dot(xv, lanes(weights4(f + 3u * row_stride)));
        }
    }
    return acc;
}

// Invocation `sub` of `per_word`' share of output word `w`'s sums (the split path).
fn word_partial(w: u32, start: u32, n: u32, sub: u32, per_word: u32) -> vec4<i32> {
    let b0 = w * 4u;
    if select(FD, ID, HWIO) % 4u == 0u && b0 >= start && b0 + 4u <= start + n {
        let e0 = b0 - start;
        let oc0 = e0 % OD;
        if oc0 + 4u <= OD && (HWIO || oc0 / PER_GROUP == (oc0 + 3u) / PER_GROUP) {
            return partial_four(e0 / OD, oc0, sub, per_word);
        }
    }
    return bytes_partial(w, start, n, sub, per_word);
}

// Output channels `oc0..oc0 + 4` of pixel `p` (all four inside the pixel), as one word.
fn four(p: u32, oc0: u32) -> u32 {
    let px = pixel_of(p);
    var acc = vec4<i32>(0);
    if HWIO {
        // One input value meets four contiguous weights.
        let tap_stride = ID * OD;
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
                let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID;
                var fb = W_BASE + (fy * FW + fx) * tap_stride + oc0;
                var ic = 0u;
                for (; ic + 4u <= ID; ic += 4u) {
                    let xv = lanes(input4(ib + ic)) + vec4<i32>(IN_OFF);
                    acc += xv.x * lanes(weights4(fb));
                    acc += xv.y * lanes(weights4(fb + OD));
                    acc += xv.z * lanes(weights4(fb + 2u * OD));
                    acc += xv.w * lanes(weights4(fb + 3u * OD));
                    fb += 4u * OD;
                }
                for (; ic < ID; ic++) {
                    acc += (input_s8(ib + ic) + IN_OFF) * lanes(weights4(fb));
                    fb += OD;
                }
            }
        }
    } else {
        // One group for all four (checked by the caller): four filter rows over the same
        // input channels.
        let channel0 = (oc0 / PER_GROUP) * FD;
        let row_stride = FH * FW * FD;
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
                let ib = IN_BASE + ((px.row0 + u32(y)) * IW + u32(x)) * ID + channel0;
                let fb = W_BASE + ((oc0 * FH + fy) * FW + fx) * FD;
                var c = 0u;
                for (; c + 4u <= FD; c += 4u) {
                    let xv = lanes(input4(ib + c)) + vec4<i32>(IN_OFF);
                    let f = fb + c;
                    acc.x += dot(xv, lanes(weights4(f)));
                    acc.y += dot(xv, lanes(weights4(f + row_stride)));
                    acc.z += dot(xv, lanes(weights4(f + 2u * row_stride)));
                    acc.w += dot(xv, lanes(weights4(f + 3u * row_stride)));
                }
                for (; c < FD; c++) {
                    let xv = input_s8(ib + c) + IN_OFF;
                    let f = fb + c;
                    let wv = vec4<i32>(
                        weight_s8(f),
                        weight_s8(f + row_stride),
                        weight_s8(f + 2u * row_stride),
                        weight_s8(f + 3u * row_stride),
                    );
                    acc += xv * wv;
                }
            }
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
    let n = param(0u) * param(7u) * param(8u) * param(9u);
    if n == 0u {
        return;
    }
    IH = param(1u);
    IW = param(2u);
    ID = param(3u);
    FH = param(4u);
    FW = param(5u);
    FD = param(6u);
    OH = param(7u);
    OW = param(8u);
    OD = param(9u);
    SH = param(10u);
    SW = param(11u);
    DH = param(12u);
    DW = param(13u);
    PH = param_i32(14u);
    PW = param_i32(15u);
    HAS_BIAS = param(16u) != 0u;
    IN_OFF = param_i32(17u);
    OUT_OFF = param_i32(18u);
    ACT_MIN = param_i32(19u);
    ACT_MAX = param_i32(20u);
    HWIO = param(21u) != 0u;
    PER_GROUP = max(OD / max(ID / max(FD, 1u), 1u), 1u);
    IN_BASE = base_byte(0u);
    W_BASE = base_byte(1u);
    BIAS_BASE = base_byte(2u) / 4u;
    MUL_BASE = base_byte(3u) / 4u;
    SHIFT_BASE = base_byte(4u) / 4u;

    let start = base_byte(5u);
    let words = words_of(start, n);
    // Few outputs with long sums: invocations share each word (the driver's
    // `conv2d_lanes` makes the same choice for the grid).
    let per_word = split_lanes((n + 3u) / 4u, FH * FW * FD, select(FD, ID, HWIO));
    if per_word > 1u {
        split_words(id, count, lane, per_word, start, n);
        return;
    }
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        let b0 = w * 4u;
        if b0 >= start && b0 + 4u <= start + n {
            let e0 = b0 - start;
            let oc0 = e0 % OD;
            if oc0 + 4u <= OD && (HWIO || oc0 / PER_GROUP == (oc0 + 3u) / PER_GROUP) {
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
