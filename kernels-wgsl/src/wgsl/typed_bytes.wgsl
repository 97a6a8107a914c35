// Shared by cast and requantize_int: build.rs appends this file to each, with
// each_byte_s8.wgsl. The bindings (bytes in and out), the element types by their words (0
// int8, 1 int16, 2 int32, 3 float32), the input's elements and the hooks each_byte_s8.wgsl
// calls; the kernel gives `converted(e) -> u32`, output element `e` in the low bytes of a
// word (little-endian). Each output byte computes its whole element.
//
// Parameter words: 0 len, 1 the input's type, 2 the output's type.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

// Bytes per element of the type with word `code`.
fn size_of_type(code: u32) -> u32 {
    return select(select(4u, 2u, code == 1u), 1u, code == 0u);
}

// Byte `i` of the input.
fn input_byte(i: u32) -> u32 {
    let b = base_byte(0u) + i;
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

// Input element `e` (of `size` bytes), little-endian, in the low bytes of a word.
fn input_word(e: u32, size: u32) -> u32 {
    var word = 0u;
    for (var k = 0u; k < size; k++) {
        word |= input_byte(e * size + k) << (8u * k);
    }
    return word;
}

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u) * size_of_type(param(2u));
}

// Byte `i` of the output: byte `i % size` of element `i / size`.
fn element(i: u32) -> i32 {
    let size = size_of_type(param(2u));
    return i32((converted(i / size) >> (8u * (i % size))) & 0xffu);
}
