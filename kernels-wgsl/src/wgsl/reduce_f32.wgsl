// Shared by the float reductions sum_f32, reduce_max_f32 and reduce_min_f32 (ember-kernels'
// `ReduceF32`): build.rs appends this file (and mean_shape.wgsl) to each. Each output starts
// at the kernel's `INITIAL` and takes its inputs in input order through `reduce(current,
// in)`. One output element per invocation; `output` must not alias `input`.
//
// Parameter words: mean_shape.wgsl's, nothing more.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = mean_outputs();
    let per_output = mean_count();
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var o = me.index; o < n; o += me.total) {
        var value = INITIAL;
        for (var j = 0u; j < per_output; j++) {
            value = reduce(value, input[in0 + mean_input_index(o, j)]);
        }
        output[out0 + o] = value;
    }
}
