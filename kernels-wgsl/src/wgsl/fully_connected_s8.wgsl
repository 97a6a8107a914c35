// fully_connected_s8: ember-kernels' `FullyConnectedS8` (TFLM's reference
// `FullyConnected`/`FullyConnectedPerChannel`). Each workgroup computes whole words of the
// output (up to 4 outputs), keeping the bytes of a word that lie outside the output: its 64
// invocations each sum every 64th product of the 4 dot products, and the partial sums are
// added in workgroup memory (wrapping `i32` addition, so any order gives the reference's
// sum). Words are shared out over the workgroups, so any grid gives the same result.
//
// Parameter words: 0 batches, 1 accum_depth, 2 output_depth, 3 has_bias, 4 input_offset,
// 5 filter_offset, 6 output_offset, 7 act_min, 8 act_max, 9 per_channel.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> bias: array<i32>;
@group(0) @binding(3) var<storage, read> multipliers: array<i32>;
@group(0) @binding(4) var<storage, read> shifts: array<i32>;
@group(0) @binding(5) var<storage, read_write> output: array<u32>;

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

fn weight_s8(i: u32) -> i32 {
    let b = base_byte(1u) + i;
    return s8_of(weights[b / 4u], b % 4u);
}

// Invocation `lane` of `per_word`'s share of output `e`'s dot product: products `lane`,
// `lane + per_word`, ...
fn partial_sum(e: u32, lane: u32, per_word: u32) -> i32 {
    let n = param(1u);
    let od = param(2u);
    let row = e / od;
    let oc = e % od;
    let in_off = param_i32(4u);
    let f_off = select(param_i32(5u), 0, param(9u) != 0u);
    var acc = 0;
    for (var k = lane; k < n; k += per_word) {
        acc += (weight_s8(oc * n + k) + f_off) * (input_s8(row * n + k) + in_off);
    }
    return acc;
}

// Output `e` from its whole dot product `dot`.
fn finish_element(e: u32, dot: i32) -> i32 {
    let od = param(2u);
    let oc = e % od;
    var acc = dot;
    if param(3u) != 0u {
        acc += bias[base_byte(2u) / 4u + oc];
    }
    let c = select(0u, oc, param(9u) != 0u);
    let m = multipliers[base_byte(3u) / 4u + c];
    let s = shifts[base_byte(4u) / 4u + c];
    let v = multiply_by_quantized_multiplier(acc, m, s) + param_i32(6u);
    return clamp_s8(v, param_i32(7u), param_i32(8u));
}

fn word_partial(w: u32, start: u32, n: u32, sub: u32, per_word: u32) -> vec4<i32> {
    return bytes_partial(w, start, n, sub, per_word);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u) * param(2u);
    if n == 0u {
        return;
    }
    split_words(id, count, lane, 64u, base_byte(5u), n);
}
