// Shared by logistic_f32 and tanh_f32: build.rs appends this file to each. The bindings
// and the loop; the kernel gives `apply(x) -> f32`. One element per invocation; the output
// may alias the input.
//
// Parameter words: 0 len.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u);
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = apply(input[in0 + e]);
    }
}
