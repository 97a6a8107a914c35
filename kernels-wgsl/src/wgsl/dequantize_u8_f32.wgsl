// dequantize_u8_f32: ember-kernels' `DequantizeU8F32` (TFLM's reference `Dequantize`):
// `scale * (x - zero_point)` of a uint8 `x`. ember-kernels multiplies in f64 and rounds once
// to f32; the product of an f32 and an integer of at most 9 bits is exact in f64, so one
// correctly rounded f32 multiplication gives the same value. One output element per
// invocation.
//
// Parameter words: 0 len, 1 scale bits, 2 zero_point.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u);
    let scale = bitcast<f32>(param(1u));
    let in0 = base_byte(0u);
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        let b = in0 + e;
        let x = i32((input[b / 4u] >> ((b % 4u) * 8u)) & 0xffu) - param_i32(2u);
        output[out0 + e] = scale * f32(x);
    }
}
