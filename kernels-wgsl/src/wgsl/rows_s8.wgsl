// Shared by the kernels along rows of `depth` int8 inputs whose outputs need their row's
// statistics (`softmax_s8`, `softmax_s8_s16` through softmax_rows.wgsl, `log_softmax_s8`):
// build.rs appends it after each one's own source. Their bindings and loop: a kernel gives
// its output range (`OUT_BITS`, 8 or 16, `OUT_MIN`, `OUT_MAX`), a `Row` struct,
// `row_of(r) -> Row` and `element(e, row) -> i32`. Each invocation computes whole words of
// the output (4 / (`OUT_BITS` / 8) outputs), keeping the parts of a word that lie outside
// the output; it calls `row_of` once per row per word its outputs lie in, so no invocation
// depends on another. `output` must not alias `input`; an int16 output starts at an even
// byte. Parameter words 0 and 1 are `outer` and `depth`.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// The largest of the `depth` inputs from element `first` (-128 for none).
fn max_of_row(first: u32, depth: u32) -> i32 {
    var max_in_row = -128;
    for (var k = 0u; k < depth; k++) {
        max_in_row = max(max_in_row, input_s8(first + k));
    }
    return max_in_row;
}

// `word` with output `slot` (of `OUT_BITS` bits, little-endian) replaced by the low bits of
// `v`.
fn with_output(word: u32, slot: u32, v: i32) -> u32 {
    let mask = (1u << u32(OUT_BITS)) - 1u;
    let shift = slot * u32(OUT_BITS);
    return (word & ~(mask << shift)) | ((bitcast<u32>(v) & mask) << shift);
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
    // Bytes `start..start + size * n`.
    let size = u32(OUT_BITS) / 8u;
    let start = base_byte(1u);
    let words = words_of(start, size * n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        var have = 0xffffffffu;
        var row: Row;
        for (var slot = 0u; slot < 4u / size; slot++) {
            let b = w * 4u + slot * size;
            if b >= start && b < start + size * n {
                let e = (b - start) / size;
                let r = e / depth;
                if r != have {
                    row = row_of(r);
                    have = r;
                }
                word = with_output(word, slot, element(e, row));
            }
        }
        output[w] = word;
    }
}
