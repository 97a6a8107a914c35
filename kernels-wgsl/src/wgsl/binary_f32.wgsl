// Shared by add_broadcast_f32 and mul_broadcast_f32: build.rs appends this file to each.
// The kernel gives `combine(a, b)`, one IEEE operation; the result is clamped to
// [act_min, act_max]. Each invocation computes whole output elements; without broadcasting
// it reads only the input elements of its own, so the output may alias an input.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 act_min bits,
// 13 act_max bits.

@group(0) @binding(0) var<storage, read> input1: array<f32>;
@group(0) @binding(1) var<storage, read> input2: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let shape = broadcast_shape();
    let a0 = base_byte(0u) / 4u;
    let b0 = base_byte(1u) / 4u;
    let out0 = base_byte(2u) / 4u;
    let lo = bitcast<f32>(param(12u));
    let hi = bitcast<f32>(param(13u));
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < shape.n; e += me.total) {
        var ab = vec2<u32>(e, e);
        if !shape.elementwise {
            ab = input_indices(e);
        }
        output[out0 + e] = clamp_f32(combine(input1[a0 + ab.x], input2[b0 + ab.y]), lo, hi);
    }
}
