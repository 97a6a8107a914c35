// transpose_conv_f32: ember-kernels' `TransposeConvF32` (TFLM's reference
// `TransposeConv<float>`). TFLM scatters each input pixel's products over the outputs its
// window covers; each invocation here gathers whole output elements instead: the products
// that land on the element summed from 0 in the order TFLM's scatter adds them (input rows
// ascending, then columns ascending, then input channels), then the bias, then the clamp.
// The filter is OHWI (`[out_depth, fh, fw, in_depth]`).
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 input_depth,
// 4 filter_height, 5 filter_width, 6 output_height, 7 output_width, 8 output_depth,
// 9 stride_height, 10 stride_width, 11 pad_height, 12 pad_width, 13 has_bias,
// 14 act_min bits, 15 act_max bits.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;

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

// Output `e` of `[batches, output_height, output_width, output_depth]`.
fn element(e: u32) -> f32 {
    let ih = param(1u);
    let iw = param(2u);
    let id = param(3u);
    let fh = param(4u);
    let fw = param(5u);
    let oh = param(6u);
    let ow = param(7u);
    let od = param(8u);
    let sh = param(9u);
    let sw = param(10u);
    let oc = e % od;
    let pixel = e / od;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let ty = oy + param(11u);
    let tx = ox + param(12u);
    let ys = covering(ty, sh, fh, ih);
    let xs = covering(tx, sw, fw, iw);
    let in0 = base_byte(0u) / 4u;
    let f0 = base_byte(1u) / 4u;
    var total = 0.0f;
    for (var iy = ys.first; iy < ys.end; iy++) {
        let fy = ty - iy * sh;
        let input_row = (b * ih + iy) * iw;
        let filter_row = (oc * fh + fy) * fw;
        for (var ix = xs.first; ix < xs.end; ix++) {
            let fx = tx - ix * sw;
            let i = in0 + (input_row + ix) * id;
            let f = f0 + (filter_row + fx) * id;
            for (var k = 0u; k < id; k++) {
                total += input[i + k] * weights[f + k];
            }
        }
    }
    if param(13u) != 0u {
        total += bias[base_byte(2u) / 4u + oc];
    }
    return clamp_f32(total, bitcast<f32>(param(14u)), bitcast<f32>(param(15u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(6u) * param(7u) * param(8u);
    let out0 = base_byte(3u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
