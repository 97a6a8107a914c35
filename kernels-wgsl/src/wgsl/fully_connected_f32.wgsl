// fully_connected_f32: ember-kernels' `FullyConnectedF32` (TFLM's reference
// `FullyConnected<float>`). Each invocation computes whole output elements: the products
// summed from 0 in input order, then the bias, then the clamp, as the reference does
// (every float operation is NoContraction, so nothing is fused).
//
// Parameter words: 0 batches, 1 accum_depth, 2 output_depth, 3 has_bias, 4 act_min bits,
// 5 act_max bits.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;

// Output `e` (row `e / output_depth`, channel `e % output_depth`).
fn element(e: u32) -> f32 {
    let n = param(1u);
    let od = param(2u);
    let row = e / od;
    let oc = e % od;
    let x0 = base_byte(0u) / 4u + row * n;
    let w0 = base_byte(1u) / 4u + oc * n;
    var total = 0.0f;
    for (var k = 0u; k < n; k++) {
        total += input[x0 + k] * weights[w0 + k];
    }
    var b = 0.0f;
    if param(3u) != 0u {
        b = bias[base_byte(2u) / 4u + oc];
    }
    return clamp_f32(total + b, bitcast<f32>(param(4u)), bitcast<f32>(param(5u)));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(2u);
    let out0 = base_byte(3u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
