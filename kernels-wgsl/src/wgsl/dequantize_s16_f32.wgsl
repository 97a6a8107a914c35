// dequantize_s16_f32: ember-kernels' `DequantizeS16F32` (TFLM's reference `Dequantize` of
// int16): `scale * (x - zero_point)`. ember-kernels multiplies in f64 and rounds once to f32;
// `x - zero_point` has at most 17 bits, so the product with an f32 (24 bits) is exact in f64
// and one correctly rounded f32 multiplication gives the same value. One output element per
// invocation; the input's two bytes are read one by one (an int16 may straddle words).
//
// Parameter words: 0 len, 1 scale bits, 2 zero_point.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

fn input_byte(b: u32) -> u32 {
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

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
        let b = in0 + 2u * e;
        let bits = input_byte(b) | (input_byte(b + 1u) << 8u);
        let x = (bitcast<i32>(bits << 16u) >> 16u) - param_i32(2u);
        output[out0 + e] = scale * f32(x);
    }
}
