// Shared by the kernels that move whole elements of 1, 2 or 4 bytes (parameter word 0, the
// element's size) from binding 0 to binding 1: build.rs appends this file to each. A
// kernel gives `output_elements()`, `source_element(e)` (the input element that output
// element `e` copies, or -1 for the kernel's fill element) and `fill_byte(k)` (byte `k` of
// the fill element). each_byte_s8.wgsl holds the loop. `output` must not alias `input`.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_byte(i: u32) -> u32 {
    let b = base_byte(0u) + i;
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

const OUT: u32 = 1u;

fn begin() -> u32 {
    return output_elements() * param(0u);
}

// Byte `i` of the output.
fn element(i: u32) -> i32 {
    let size = param(0u);
    let k = i % size;
    let s = source_element(i / size);
    if s < 0 {
        return i32(fill_byte(k));
    }
    return i32(input_byte(u32(s) * size + k));
}
