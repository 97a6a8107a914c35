// Shared by the kernels that move whole elements of 1, 2 or 4 bytes (parameter word 0, the
// element's size) from binding 0 to binding 1: build.rs appends this file to each. A
// kernel gives `output_elements()`, `source_element(e)` (the input element that output
// element `e` copies, or -1 for the kernel's fill element) and `fill_byte(k)` (byte `k` of
// the fill element). Each invocation computes whole words of the output, keeping the bytes
// of a word that lie outside the output. `output` must not alias `input`.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_byte(i: u32) -> u32 {
    let b = base_byte(0u) + i;
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let size = param(0u);
    let n = output_elements() * size;
    if n == 0u {
        return;
    }
    let start = base_byte(1u);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                let i = b - start;
                let k = i % size;
                let s = source_element(i / size);
                var v = 0u;
                if s < 0 {
                    v = fill_byte(k);
                } else {
                    v = input_byte(u32(s) * size + k);
                }
                word = with_byte(word, l, i32(v));
            }
        }
        output[w] = word;
    }
}
