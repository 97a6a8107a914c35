// lut_s8: ember-kernels' `LutS8`: `output[i] = table[input[i] as u8]`, the 256-entry table
// the importer filled as TFLM's Prepare does (int8 ELU). each_byte_s8.wgsl runs the loop; an
// element reads only its own input, so the output may alias the input.
//
// Parameter words: 0 len.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

const OUT: u32 = 2u;

fn begin() -> u32 {
    return param(0u);
}

fn element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    let index = (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
    let t = base_byte(1u) + index;
    return s8_of(table[t / 4u], t % 4u);
}
