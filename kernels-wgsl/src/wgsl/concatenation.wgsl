// concatenation: ember-kernels' `Concatenation` (TFLM's reference `Concatenation`): for
// each outer index, each input's slab in turn, elements of 1, 2 or 4 bytes moved as bytes.
// Bindings `0..count` are the inputs and `count` the output, the dispatch's last binding (the
// driver's check holds it to that): WGSL cannot index bindings, so `load` and `store` pick
// theirs by number. Up to 10 inputs, so the push block leads with 11 binding offsets and the
// parameters start at word 11 (`PARAMS_AT`). Each invocation computes whole words of the
// output, keeping the bytes of a word that lie outside it; the output must not alias an
// input.
//
// Parameter words: 0 elem_bytes, 1 outer, 2 inner, 3 count, 4.. each input's extent along
// the axis.

@group(0) @binding(0) var<storage, read> b0: array<u32>;
@group(0) @binding(1) var<storage, read_write> b1: array<u32>;
@group(0) @binding(2) var<storage, read_write> b2: array<u32>;
@group(0) @binding(3) var<storage, read_write> b3: array<u32>;
@group(0) @binding(4) var<storage, read_write> b4: array<u32>;
@group(0) @binding(5) var<storage, read_write> b5: array<u32>;
@group(0) @binding(6) var<storage, read_write> b6: array<u32>;
@group(0) @binding(7) var<storage, read_write> b7: array<u32>;
@group(0) @binding(8) var<storage, read_write> b8: array<u32>;
@group(0) @binding(9) var<storage, read_write> b9: array<u32>;
@group(0) @binding(10) var<storage, read_write> b10: array<u32>;

// Word `w` of binding `i` (0..=10).
fn load(i: u32, w: u32) -> u32 {
    switch i {
        case 0u: { return b0[w]; }
        case 1u: { return b1[w]; }
        case 2u: { return b2[w]; }
        case 3u: { return b3[w]; }
        case 4u: { return b4[w]; }
        case 5u: { return b5[w]; }
        case 6u: { return b6[w]; }
        case 7u: { return b7[w]; }
        case 8u: { return b8[w]; }
        case 9u: { return b9[w]; }
        default: { return b10[w]; }
    }
}

// Writes word `w` of binding `i` (1..=10).
fn store(i: u32, w: u32, v: u32) {
    switch i {
        case 1u: { b1[w] = v; }
        case 2u: { b2[w] = v; }
        case 3u: { b3[w] = v; }
        case 4u: { b4[w] = v; }
        case 5u: { b5[w] = v; }
        case 6u: { b6[w] = v; }
        case 7u: { b7[w] = v; }
        case 8u: { b8[w] = v; }
        case 9u: { b9[w] = v; }
        default: { b10[w] = v; }
    }
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let inputs = param(3u);
    // Bytes per index along the axis, and per outer index of the output.
    let unit = param(2u) * param(0u);
    var row = 0u;
    for (var j = 0u; j < inputs; j++) {
        row += param(4u + j) * unit;
    }
    let n = param(1u) * row;
    if n == 0u {
        return;
    }
    let out = inputs;
    let start = base_byte(out);
    let words = words_of(start, n);
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = load(out, w);
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                let i = b - start;
                let outer = i / row;
                // The input whose slab holds byte `at` of this row, and its slab's length.
                var at = i % row;
                var j = 0u;
                var slab = param(4u) * unit;
                while at >= slab {
                    at -= slab;
                    j++;
                    slab = param(4u + j) * unit;
                }
                let s = base_byte(j) + outer * slab + at;
                let v = (load(j, s / 4u) >> (8u * (s % 4u))) & 0xffu;
                word = with_byte(word, l, i32(v));
            }
        }
        store(out, w, word);
    }
}
