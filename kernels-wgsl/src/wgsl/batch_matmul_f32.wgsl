// batch_matmul_f32: ember-kernels' `BatchMatmulF32` (TFLM's reference float `BatchMatMul`).
// Each invocation computes whole outputs: the products summed from 0 in `depth` order, as
// the reference does (every float operation is NoContraction, so nothing is fused).
// batch_matmul_at.wgsl finds the operands.
//
// Parameter words: 0..=10 the shape (batch_matmul_at.wgsl).

@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;

fn element(e: u32) -> f32 {
    let at = batch_matmul_at(e);
    let depth = param(8u);
    let l0 = base_word(0u) + at.l;
    let r0 = base_word(1u) + at.r;
    var total = 0.0f;
    for (var k = 0u; k < depth; k++) {
        total += rhs[r0 + k * at.r_k] * lhs[l0 + k * at.l_k];
    }
    return total;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = batch_matmul_len();
    let out0 = base_word(2u);
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = element(e);
    }
}
