// Shared by the kernels that compute each output byte alone: the int8 element-wise ones
// (add_s8, mul_s8, requantize_s8, logistic_s8, tanh_s8, max_pool2d_s8, …) and those that
// move or convert bytes (gather_bytes.wgsl's, gather, gather_nd, select, cast): build.rs
// appends this file to each. A kernel declares its `output` binding, gives `OUT` (that binding's index),
// `begin() -> u32` (reads what it needs once and returns the output's element count) and
// `element(e) -> i32`. Each invocation computes whole words of the output (up to 4
// outputs), keeping the bytes of a word that lie outside the output; where `element`
// reads only the inputs of its own element, the output may alias an input.

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = begin();
    if n == 0u {
        return;
    }
    let start = base_byte(OUT);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start));
            }
        }
        output[w] = word;
    }
}
