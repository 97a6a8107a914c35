// select: ember-kernels' `Select` (TFLM's SELECT_V2; FILL, ZEROS_LIKE, BROADCAST_TO and SHAPE
// with a `true` condition): `condition ? x : y` with the three inputs broadcast to the output, elements of 1, 2 or 4 bytes moved as they are, a condition byte
// other than 0 read as true. each_byte_s8.wgsl holds the loop; the output must not alias an
// input.
//
// Parameter words: 0..=5 the condition's dimensions, 6..=11 x's, 12..=17 y's, 18..=23 the
// output's (right-aligned with leading 1s; each input's 1 or the output's), 24 element_bytes.

@group(0) @binding(0) var<storage, read> condition: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> y: array<u32>;
@group(0) @binding(3) var<storage, read_write> output: array<u32>;

fn byte_of(word: u32, b: u32) -> u32 {
    return (word >> (8u * (b % 4u))) & 0xffu;
}

fn output_dim(d: u32) -> u32 {
    return param(d + 18u);
}

// Byte `i` of the output.
fn output_byte(i: u32) -> u32 {
    let size = param(24u);
    var rest = i / size;
    var at = vec3<u32>(0u);
    var stride = vec3<u32>(1u);
    for (var d = 5; d >= 0; d--) {
        let dim = u32(d);
        let out = output_dim(dim);
        let index = rest % out;
        rest = rest / out;
        let dims = vec3<u32>(param(dim), param(dim + 6u), param(dim + 12u));
        at += select(vec3<u32>(0u), vec3<u32>(index) * stride, dims != vec3<u32>(1u));
        stride *= dims;
    }
    let c = base_byte(0u) + at.x;
    let within = i % size;
    if byte_of(condition[c / 4u], c) != 0u {
        let b = base_byte(1u) + at.y * size + within;
        return byte_of(x[b / 4u], b);
    }
    let b = base_byte(2u) + at.z * size + within;
    return byte_of(y[b / 4u], b);
}

const OUT: u32 = 3u;

fn begin() -> u32 {
    var n = param(24u);
    for (var d = 0u; d < 6u; d++) {
        n *= output_dim(d);
    }
    return n;
}

fn element(e: u32) -> i32 {
    return i32(output_byte(e));
}
