// mul_f32: out[i] = a[i] * b[i] (zip_f32.wgsl's loop) with no parameter words; given
// ember-kernels' `MulF32` words (TFLM's reference_ops `Mul`/`BroadcastMul6DSlow`, float:
// every dimension at least 1, so word 0 is not 0), `clamp(a * b)` broadcast
// (binary_f32.wgsl's loop). The bindings are pair_f32.wgsl's.

fn combine(x: f32, y: f32) -> f32 {
    return x * y;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    if param(0u) == 0u {
        zip_f32(id, count, lane);
    } else {
        broadcast_f32(id, count, lane);
    }
}
