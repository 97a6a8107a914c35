// div_f32: ember-kernels' `DivF32` (TFLM's float DIV): `clamp(a / b)` broadcast
// (binary_f32.wgsl's loop, pair_f32.wgsl's bindings), the quotient correctly rounded
// (div_rn.wgsl) and IEEE's at a zero divisor, where Vulkan leaves OpFDiv undefined: NaN for
// 0 / 0 and NaN / 0, else an infinity of the operands' signs.

fn combine(x: f32, y: f32) -> f32 {
    if y == 0.0 {
        if x == 0.0 || is_nan(x) {
            return bitcast<f32>(0x7fc00000u);
        }
        let sign = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
        return bitcast<f32>(sign | 0x7f800000u);
    }
    return div_rn(x, y);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    broadcast_f32(id, count, lane);
}
