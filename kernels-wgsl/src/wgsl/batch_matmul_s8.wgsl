// batch_matmul_s8: ember-kernels' `BatchMatmulS8` (TFLM's int8 `BatchMatMul` with
// `FullyConnectedParams`): each output sums `(rhs + rhs_offset) · (lhs + lhs_offset)` over
// `depth` in wrapping int32, then is scaled by one multiplier, offset and clamped to int8.
// batch_matmul_at.wgsl finds the operands, each_byte_s8.wgsl holds the loop.
//
// Parameter words: 0..=10 the shape (batch_matmul_at.wgsl), 11 lhs_offset, 12 rhs_offset,
// 13 output_offset, 14 multiplier, 15 shift.

@group(0) @binding(0) var<storage, read> lhs: array<u32>;
@group(0) @binding(1) var<storage, read> rhs: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

const OUT: u32 = 2u;

fn begin() -> u32 {
    return batch_matmul_len();
}

fn lhs_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(lhs[b / 4u], b % 4u);
}

fn rhs_s8(i: u32) -> i32 {
    let b = base_byte(1u) + i;
    return s8_of(rhs[b / 4u], b % 4u);
}

fn element(e: u32) -> i32 {
    let at = batch_matmul_at(e);
    let depth = param(8u);
    let lhs_offset = param_i32(11u);
    let rhs_offset = param_i32(12u);
    var total = 0i;
    for (var k = 0u; k < depth; k++) {
        let l = lhs_s8(at.l + k * at.l_k) + lhs_offset;
        let r = rhs_s8(at.r + k * at.r_k) + rhs_offset;
        total += r * l;
    }
    let scaled = multiply_by_quantized_multiplier(total, param_i32(14u), param_i32(15u));
    return clamp_s8(scaled + param_i32(13u), -128, 127);
}
