// mul_broadcast_f32: ember-kernels' `MulF32` (TFLM's reference_ops `Mul`/`BroadcastMul6DSlow`,
// float): `clamp(a * b)`. binary_f32.wgsl holds the bindings, the parameters and the loop.

fn combine(a: f32, b: f32) -> f32 {
    return a * b;
}
