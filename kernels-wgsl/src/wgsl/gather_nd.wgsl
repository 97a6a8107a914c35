// gather_nd: ember-kernels' `GatherNd` (TFLM's GATHER_ND): each row of int32 indices names a
// slice of the input by its flat position (`Σ index × stride`), copied whole. A position
// outside the input gives zeros here (hal-local refuses the dispatch instead). Each
// invocation computes whole words of the output, keeping the bytes of a word outside it; the
// output must not alias the input.
//
// Parameter words: 0 elem_bytes, 1 slices, 2 slice_len, 3 input_len, 4 index_depth,
// 5..=9 the indexed dimensions' strides.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

fn input_byte(i: u32) -> u32 {
    let b = base_byte(0u) + i;
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

// Byte `i` of the output.
fn output_byte(i: u32) -> u32 {
    let size = param(0u);
    let slice_len = param(2u);
    let depth = param(4u);
    let e = i / size;
    let row = e / slice_len;
    var start = 0;
    for (var d = 0u; d < depth; d++) {
        start += indices[base_word(1u) + row * depth + d] * i32(param(5u + d));
    }
    if start < 0 || u32(start) + slice_len > param(3u) {
        return 0u;
    }
    return input_byte((u32(start) + e % slice_len) * size + i % size);
}

const OUT: u32 = 2u;

fn begin() -> u32 {
    return param(0u) * param(1u) * param(2u);
}

fn element(e: u32) -> i32 {
    return i32(output_byte(e));
}
