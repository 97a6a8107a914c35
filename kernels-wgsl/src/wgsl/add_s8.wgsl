// add_s8: ember-kernels' `AddS8` (TFLM's reference_integer_ops `Add`/`BroadcastAdd6DSlow`).
// each_byte_s8.wgsl runs the loop; without broadcasting an element reads only its own
// inputs, so the output may alias an input.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 left_shift,
// 13 input1_offset, 14 input1_multiplier, 15 input1_shift, 16 input2_offset,
// 17 input2_multiplier, 18 input2_shift, 19 output_offset, 20 output_multiplier,
// 21 output_shift, 22 act_min, 23 act_max.

@group(0) @binding(0) var<storage, read> input1: array<u32>;
@group(0) @binding(1) var<storage, read> input2: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

const OUT: u32 = 2u;

// Whether both inputs have the output's shape (no index arithmetic then).
var<private> ELEMENTWISE: bool;

fn begin() -> u32 {
    let shape = broadcast_shape();
    ELEMENTWISE = shape.elementwise;
    return shape.n;
}

fn input1_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input1[b / 4u], b % 4u);
}

fn input2_s8(i: u32) -> i32 {
    let b = base_byte(1u) + i;
    return s8_of(input2[b / 4u], b % 4u);
}

fn element(e: u32) -> i32 {
    var ia = e;
    var ib = e;
    if !ELEMENTWISE {
        let ab = input_indices(e);
        ia = ab.x;
        ib = ab.y;
    }
    let left = param(12u);
    let a = bitcast<i32>(bitcast<u32>(param_i32(13u) + input1_s8(ia)) << left);
    let b = bitcast<i32>(bitcast<u32>(param_i32(16u) + input2_s8(ib)) << left);
    let sa = multiply_by_quantized_multiplier(a, param_i32(14u), param_i32(15u));
    let sb = multiply_by_quantized_multiplier(b, param_i32(17u), param_i32(18u));
    let out = multiply_by_quantized_multiplier(sa + sb, param_i32(20u), param_i32(21u))
        + param_i32(19u);
    return clamp_s8(out, param_i32(22u), param_i32(23u));
}
