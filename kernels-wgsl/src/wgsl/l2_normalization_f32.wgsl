// l2_normalization_f32: ember-kernels' `L2NormalizationF32` (TFLM's float L2_NORMALIZATION
// over the last dimension): `x / max(sqrt(Σ x²), 1e-6)`, the sum in order (each element sums
// its row again, so every element of a row divides by the same norm) and the quotient
// correctly rounded (div_rn.wgsl). The device's `sqrt` is its own (Vulkan allows it the
// error of `inverseSqrt(x) * x`). The output must not alias the input.
//
// Parameter words: 0 outer, 1 depth.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let depth = param(1u);
    let n = param(0u) * depth;
    let in0 = base_word(0u);
    let out0 = base_word(1u);
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        let row = in0 + (e / depth) * depth;
        var squares = 0.0f;
        for (var c = 0u; c < depth; c++) {
            let value = input[row + c];
            squares = squares + value * value;
        }
        let norm = max(sqrt(squares), 1e-6f);
        output[out0 + e] = div_rn(input[in0 + e], norm);
    }
}
