// Shared by dequantize_s8_f32, dequantize_u8_f32 and dequantize_s16_f32 (TFLM's reference
// `Dequantize`): build.rs appends this file to each. The bindings and the loop,
// `scale * (x - zero_point)`; the kernel gives `input_element(e) -> i32`, input element `e`
// extended to i32. ember-kernels multiplies in f64 and rounds once to f32; `x - zero_point`
// has at most 17 bits, so its product with an f32 (24 bits) is exact in f64 and one correctly
// rounded f32 multiplication gives the same value. One output element per invocation.
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
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        let x = input_element(e) - param_i32(2u);
        output[out0 + e] = scale * f32(x);
    }
}
