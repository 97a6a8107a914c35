// Shared by reduce_max_s8 and reduce_min_s8 (ember-kernels' `ReduceS8`): build.rs appends
// this file (with mean_shape.wgsl and each_byte_s8.wgsl) to each. The bindings, and
// `element(o)`: output `o` from the kernel's `INITIAL` through `reduce(current, in)` over its
// inputs in input order. `output` must not alias `input`.
//
// Parameter words: mean_shape.wgsl's, nothing more.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return mean_outputs();
}

fn element(o: u32) -> i32 {
    var value = INITIAL;
    for (var j = 0u; j < mean_count(); j++) {
        let b = base_byte(0u) + mean_input_index(o, j);
        value = reduce(value, s8_of(input[b / 4u], b % 4u));
    }
    return value;
}
