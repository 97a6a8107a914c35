// logistic_f32: ember-kernels' `LogisticF32` (TFLM's reference `Logistic<float>`): 1 above
// 16.619047, `exp(x)` below -9, else `1 / (1 + exp(-x))`, with the device's `exp` (Vulkan
// allows 3 + 2|x| ulp). One element per invocation; the output may alias the input.
//
// Parameter words: 0 len.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u);
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        let x = input[in0 + e];
        var y = 1.0 / (1.0 + exp(-x));
        if x > 16.619047 {
            y = 1.0;
        } else if x < -9.0 {
            y = exp(x);
        }
        output[out0 + e] = y;
    }
}
