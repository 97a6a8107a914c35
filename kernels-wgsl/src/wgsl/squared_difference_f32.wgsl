// squared_difference_f32: ember-kernels' `SquaredDifferenceF32` (TFLM's float
// SQUARED_DIFFERENCE): `(a - b) * (a - b)` broadcast, its clamp range infinite
// (binary_f32.wgsl's loop, pair_f32.wgsl's bindings).

fn combine(x: f32, y: f32) -> f32 {
    let difference = x - y;
    return difference * difference;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    broadcast_f32(id, count, lane);
}
