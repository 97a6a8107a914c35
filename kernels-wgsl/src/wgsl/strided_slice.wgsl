// strided_slice: ember-kernels' `StridedSlice` (TFLM's reference `StridedSlice`, begin,
// end, strides and masks resolved by the importer into per-axis start, stop and stride), 5
// dimensions, elements of 1, 2 or 4 bytes (gather_bytes.wgsl moves them).
//
// Parameter words: 0 elem_bytes, 1..=5 the input's dimensions, then per axis `d`:
// 6 + 3d start, 7 + 3d stop, 8 + 3d stride (non-zero).

// Indices axis `d` visits: from `start` towards `stop` (exclusive) in steps of `stride`;
// the differences are taken in u32, so no i32 overflows.
fn extent(d: u32) -> u32 {
    let start = param_i32(6u + 3u * d);
    let stop = param_i32(7u + 3u * d);
    let stride = param_i32(8u + 3u * d);
    var span = 0u;
    var step = 0u;
    if stride > 0 && stop > start {
        span = bitcast<u32>(stop) - bitcast<u32>(start);
        step = u32(stride);
    } else if stride < 0 && start > stop {
        span = bitcast<u32>(start) - bitcast<u32>(stop);
        step = 0u - bitcast<u32>(stride);
    } else {
        return 0u;
    }
    return span / step + select(0u, 1u, span % step != 0u);
}

fn output_elements() -> u32 {
    var n = 1u;
    for (var d = 0u; d < 5u; d++) {
        n *= extent(d);
    }
    return n;
}

// The input element that output element `e` copies (every one lies inside the input: the
// parameters' check holds it).
fn source_element(e: u32) -> i32 {
    var rest = e;
    var source = 0u;
    var stride = 1u;
    for (var d = 4; d >= 0; d--) {
        let i = u32(d);
        let extent = extent(i);
        let index = rest % extent;
        rest = rest / extent;
        let at = param_i32(6u + 3u * i) + i32(index) * param_i32(8u + 3u * i);
        source += u32(at) * stride;
        stride *= param(1u + i);
    }
    return i32(source);
}

fn fill_byte(k: u32) -> u32 {
    return 0u;
}
