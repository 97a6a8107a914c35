// Shared by average_pool2d_f32 and max_pool2d_f32: build.rs appends this file to each. The
// bindings and the loop; the kernel gives `element(e) -> f32`, output `e`. Each invocation
// computes whole output elements.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

// The window cell (`fy`, `fx`) of `w`, which lies inside the input.
fn cell(w: Window, fy: i32, fx: i32) -> f32 {
    return input[base_byte(0u) / 4u + cell_index(w, fy, fx)];
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = pool_outputs();
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
