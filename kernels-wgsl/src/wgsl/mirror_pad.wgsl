// mirror_pad: ember-kernels' `MirrorPad` (TFLM's MIRROR_PAD), 5 dimensions, elements of 1, 2
// or 4 bytes (gather_bytes.wgsl moves them): each output element copies the input element
// its index mirrors into, REFLECT (offset 1) or SYMMETRIC (offset 0).
//
// Parameter words: 0 elem_bytes, 1 the offset, 2..=6 the input's dimensions, 7..=11 the
// leading paddings, 12..=16 the trailing ones.

fn output_elements() -> u32 {
    var n = 1u;
    for (var d = 0u; d < 5u; d++) {
        n *= param(2u + d) + param(7u + d) + param(12u + d);
    }
    return n;
}

// The input element under output element `e`.
fn source_element(e: u32) -> i32 {
    let offset = param(1u);
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
        var source_index = index - before;
        if index < before {
            source_index = before - 1u + offset - index;
        } else if index >= before + dim {
            source_index = dim - 1u - offset - (index - before - dim);
        }
        source += source_index * stride;
        stride *= dim;
    }
    return i32(source);
}

fn fill_byte(k: u32) -> u32 {
    return 0u;
}
