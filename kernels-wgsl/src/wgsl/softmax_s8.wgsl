// softmax_s8: ember-kernels' `SoftmaxS8` (TFLM's reference_ops `Softmax<int8_t, int8_t>`),
// its rows as `softmax_rows.wgsl` computes them. Each invocation computes whole words of the
// output (up to 4 outputs), keeping the bytes of a word that lie outside the output; it
// computes the max and the sum of exponentials of each row its outputs lie in (once per row
// per word), so no invocation depends on another. `output` must not alias `input`.

const OUT_BITS: i32 = 8;
const OUT_MIN: i32 = -128;
const OUT_MAX: i32 = 127;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let depth = param(1u);
    let n = param(0u) * depth;
    if n == 0u {
        return;
    }
    let start = base_byte(1u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        var have = 0xffffffffu;
        var row = Row(0, 0, 0);
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                let e = b - start;
                let r = e / depth;
                if r != have {
                    row = row_of(r);
                    have = r;
                }
                word = with_byte(word, l, element(e, row));
            }
        }
        output[w] = word;
    }
}
