// softmax_s8_s16: ember-kernels' `SoftmaxS8S16` (TFLM's reference_ops
// `Softmax<int8_t, int16_t>`), its rows as `softmax_rows.wgsl` computes them, into int16
// outputs whose binding starts at an even byte. Each invocation computes whole words of the
// output (two outputs each), keeping the half of a word that lies outside the output; it
// computes the max and the sum of exponentials of each row its outputs lie in (once per row
// per word), so no invocation depends on another. `output` must not alias `input`.

const OUT_BITS: i32 = 16;
const OUT_MIN: i32 = -32768;
const OUT_MAX: i32 = 32767;

// `word` with its half `h` (0 or 1, little-endian) replaced by the low 16 bits of `v`.
fn with_half(word: u32, h: u32, v: i32) -> u32 {
    let shift = h * 16u;
    return (word & ~(0xffffu << shift)) | ((bitcast<u32>(v) & 0xffffu) << shift);
}

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
    // Bytes `start..start + 2n`, `start` even.
    let start = base_byte(1u);
    let words = words_of(start, 2u * n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        var have = 0xffffffffu;
        var row = Row(0, 0, 0);
        for (var h = 0u; h < 2u; h++) {
            let b = w * 4u + 2u * h;
            if b >= start && b < start + 2u * n {
                let e = (b - start) / 2u;
                let r = e / depth;
                if r != have {
                    row = row_of(r);
                    have = r;
                }
                word = with_half(word, h, element(e, row));
            }
        }
        output[w] = word;
    }
}
