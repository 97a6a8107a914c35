// prelu_f32: ember-kernels' `PreluF32` (TFLM's float PRELU): `x >= 0 ? x : x * alpha`, alpha
// broadcast, its clamp range infinite
// (binary_f32.wgsl's loop, pair_f32.wgsl's bindings).

fn combine(x: f32, y: f32) -> f32 {
    return select(x * y, x, x >= 0.0);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    broadcast_f32(id, count, lane);
}
