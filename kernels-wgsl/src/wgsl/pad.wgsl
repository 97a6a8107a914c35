// pad: ember-kernels' `Pad` (TFLM's reference `Pad`), 5 dimensions, elements of 1, 2 or 4
// bytes (gather_bytes.wgsl moves them).
//
// Parameter words: 0 elem_bytes, 1 the pad element (its low bytes, little-endian),
// 2..=6 the input's dimensions, 7..=11 the leading paddings, 12..=16 the trailing ones.

fn output_elements() -> u32 {
    var n = 1u;
    for (var d = 0u; d < 5u; d++) {
        n *= param(2u + d) + param(7u + d) + param(12u + d);
    }
    return n;
}

// The input element under output element `e`, or -1 in the padding.
fn source_element(e: u32) -> i32 {
    var rest = e;
    var source = 0u;
    var stride = 1u;
    for (var d = 4; d >= 0; d--) {
        let i = u32(d);
        let dim = param(2u + i);
        let before = param(7u + i);
        let extent = dim + before + param(12u + i);
        let index = rest % extent;
        rest = rest / extent;
        if index < before || index >= before + dim {
            return -1;
        }
        source += (index - before) * stride;
        stride *= dim;
    }
    return i32(source);
}

fn fill_byte(k: u32) -> u32 {
    return (param(1u) >> (8u * k)) & 0xffu;
}
