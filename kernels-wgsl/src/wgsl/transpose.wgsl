// transpose: ember-kernels' `Transpose` (TFLM's reference `Transpose`), up to 6
// dimensions, elements of 1, 2 or 4 bytes (gather_bytes.wgsl moves them): output dimension
// `i` is input dimension `perm[i]`.
//
// Parameter words: 0 elem_bytes, 1 rank, then the input's `rank` dimensions, then `perm`.

fn output_elements() -> u32 {
    var n = 1u;
    for (var d = 0u; d < param(1u); d++) {
        n *= param(2u + d);
    }
    return n;
}

// The input element that output element `e` copies.
fn source_element(e: u32) -> i32 {
    let rank = param(1u);
    var rest = e;
    var source = 0u;
    for (var d = i32(rank) - 1; d >= 0; d--) {
        let axis = param(2u + rank + u32(d));
        let extent = param(2u + axis);
        let index = rest % extent;
        rest = rest / extent;
        var stride = 1u;
        for (var j = axis + 1u; j < rank; j++) {
            stride *= param(2u + j);
        }
        source += index * stride;
    }
    return i32(source);
}

fn fill_byte(k: u32) -> u32 {
    return 0u;
}
