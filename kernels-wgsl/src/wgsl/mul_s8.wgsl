// mul_s8: ember-kernels' `MulS8` (TFLM's reference_integer_ops `Mul`/`BroadcastMul6DSlow`):
// the product of the offset inputs, rescaled once. Each invocation computes whole words of
// the output (up to 4 outputs), keeping the bytes of a word that lie outside the output.
// Without broadcasting it reads only the input elements of its own output word, so the
// output may alias an input.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 input1_offset,
// 13 input2_offset, 14 output_offset, 15 output_multiplier, 16 output_shift, 17 act_min,
// 18 act_max.

@group(0) @binding(0) var<storage, read> input1: array<u32>;
@group(0) @binding(1) var<storage, read> input2: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

fn input1_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input1[b / 4u], b % 4u);
}

fn input2_s8(i: u32) -> i32 {
    let b = base_byte(1u) + i;
    return s8_of(input2[b / 4u], b % 4u);
}

fn element(e: u32, elementwise: bool) -> i32 {
    var ia = e;
    var ib = e;
    if !elementwise {
        let ab = input_indices(e);
        ia = ab.x;
        ib = ab.y;
    }
    let a = param_i32(12u) + input1_s8(ia);
    let b = param_i32(13u) + input2_s8(ib);
    let out = multiply_by_quantized_multiplier(a * b, param_i32(15u), param_i32(16u))
        + param_i32(14u);
    return clamp_s8(out, param_i32(17u), param_i32(18u));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let shape = broadcast_shape();
    let n = shape.n;
    let elementwise = shape.elementwise;
    if n == 0u {
        return;
    }
    let start = base_byte(2u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start, elementwise));
            }
        }
        output[w] = word;
    }
}
