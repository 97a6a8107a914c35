// gather: ember-kernels' `Gather` (TFLM's GATHER): slices of the input along an axis picked
// by int32 indices, per batch and outer index. An index outside the axis gives zeros here
// (hal-local refuses the dispatch instead). each_byte_s8.wgsl holds the loop; the output
// must not alias the input.
//
// Parameter words: 0 elem_bytes, 1 batches, 2 outer, 3 axis_size, 4 inner, 5 coords.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

fn input_byte(i: u32) -> u32 {
    let b = base_byte(0u) + i;
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

// Byte `i` of the output.
fn output_byte(i: u32) -> u32 {
    let size = param(0u);
    let outer = param(2u);
    let axis_size = param(3u);
    let inner = param(4u);
    let coords = param(5u);
    let e = i / size;
    let within = e % inner;
    let coord = (e / inner) % coords;
    let outer_index = (e / (inner * coords)) % outer;
    let batch = e / (inner * coords * outer);
    let index = indices[base_byte(1u) / 4u + batch * coords + coord];
    if index < 0 || u32(index) >= axis_size {
        return 0u;
    }
    let source = ((batch * outer + outer_index) * axis_size + u32(index)) * inner + within;
    return input_byte(source * size + i % size);
}

const OUT: u32 = 2u;

fn begin() -> u32 {
    return param(0u) * param(1u) * param(2u) * param(4u) * param(5u);
}

fn element(e: u32) -> i32 {
    return i32(output_byte(e));
}
