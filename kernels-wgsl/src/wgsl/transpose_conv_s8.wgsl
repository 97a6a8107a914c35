// transpose_conv_s8: ember-kernels' `TransposeConvS8` (TFLM's reference
// `reference_integer_ops::TransposeConv`, per-channel requantization), the filter OHWI
// (`[out_depth, fh, fw, in_depth]`). TFLM scatters each input pixel's products into an int32
// scratch; each invocation here gathers whole words of the output (up to 4 outputs),
// keeping the bytes of a word that lie outside the output: each output sums
// `(x + input_offset) * w` over the input pixels whose window covers it, in wrapping i32
// (the order does not change the sum), then bias, requantization, offset and clamp
// (window_s8.wgsl's bindings, loads and `finish`).
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 filter_height, 5 filter_width, 6 output_height, 7 output_width, 8 output_depth,
// 9 stride_height, 10 stride_width, 11 pad_height, 12 pad_width, 13 has_bias,
// 14 input_offset, 15 output_offset, 16 act_min, 17 act_max.

// The padding (window_s8.wgsl's `PH` and `PW` are a convolution's, signed).
var<private> PAD_H: u32;
var<private> PAD_W: u32;

// The input rows (or columns) `first..end` whose windows cover output index `t - pad` (`t`
// the index plus the padding, `taps` the filter's height or width): those below
// `input_size` with `0 <= t - i * stride < taps`.
struct Span {
    first: u32,
    end: u32,
}

fn covering(t: u32, stride: u32, taps: u32, input_size: u32) -> Span {
    var first = 0u;
    if t >= taps {
        first = (t - taps + stride) / stride;
    }
    let end = min(t / stride + 1u, input_size);
    return Span(first, max(end, first));
}

// Output element `e` of `[batches, output_height, output_width, output_depth]`.
fn element(e: u32) -> i32 {
    let oc = e % OD;
    let pixel = e / OD;
    let ox = pixel % OW;
    let r = pixel / OW;
    let oy = r % OH;
    let b = r / OH;
    let ty = oy + PAD_H;
    let tx = ox + PAD_W;
    let ys = covering(ty, SH, FH, IH);
    let xs = covering(tx, SW, FW, IW);
    var acc = 0;
    for (var iy = ys.first; iy < ys.end; iy++) {
        let fy = ty - iy * SH;
        let input_row = (b * IH + iy) * IW;
        let filter_row = (oc * FH + fy) * FW;
        for (var ix = xs.first; ix < xs.end; ix++) {
            let fx = tx - ix * SW;
            let ib = IN_BASE + (input_row + ix) * ID;
            let fb = W_BASE + (filter_row + fx) * ID;
            var c = 0u;
            for (; c + 4u <= ID; c += 4u) {
                let xv = lanes(input4(ib + c)) + vec4<i32>(IN_OFF);
                acc += dot(xv, lanes(weights4(fb + c)));
            }
            for (; c < ID; c++) {
                acc += (input_s8(ib + c) + IN_OFF) * weight_s8(fb + c);
            }
        }
    }
    return finish(oc, acc);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(6u) * param(7u) * param(8u);
    if n == 0u {
        return;
    }
    IH = param(1u);
    IW = param(2u);
    ID = param(3u);
    FH = param(4u);
    FW = param(5u);
    OH = param(6u);
    OW = param(7u);
    OD = param(8u);
    SH = param(9u);
    SW = param(10u);
    PAD_H = param(11u);
    PAD_W = param(12u);
    HAS_BIAS = param(13u) != 0u;
    IN_OFF = param_i32(14u);
    OUT_OFF = param_i32(15u);
    ACT_MIN = param_i32(16u);
    ACT_MAX = param_i32(17u);
    IN_BASE = base_byte(0u);
    W_BASE = base_byte(1u);
    BIAS_BASE = base_byte(2u) / 4u;
    MUL_BASE = base_byte(3u) / 4u;
    SHIFT_BASE = base_byte(4u) / 4u;

    let start = base_byte(5u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start));
            }
        }
        output[w] = word;
    }
}
