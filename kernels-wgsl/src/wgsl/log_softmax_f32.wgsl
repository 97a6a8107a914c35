// log_softmax_f32: ember-kernels' `LogSoftmaxF32` (TFLM's float LOG_SOFTMAX): per row,
// `x - max - log(sum(exp(x - max)))`, the maximum from the lowest float (`max < x ? x :
// max`), the sum from 0 in order with hal-local's `exp_f32` (exp.wgsl, the same bits on
// every device) and the device's `log`. One row per invocation; `output` must not alias
// `input`.
//
// Parameter words: 0 rows, 1 depth.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let rows = param(0u);
    let depth = param(1u);
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var row = me.index; row < rows; row += me.total) {
        let start = row * depth;
        var max_value = -3.40282347e+38f;
        for (var c = 0u; c < depth; c++) {
            let x = input[in0 + start + c];
            max_value = select(max_value, x, max_value < x);
        }
        var sum = 0.0f;
        for (var c = 0u; c < depth; c++) {
            sum += exp_f32(input[in0 + start + c] - max_value);
        }
        let log_sum = log(sum);
        for (var c = 0u; c < depth; c++) {
            output[out0 + start + c] = input[in0 + start + c] - max_value - log_sum;
        }
    }
}
