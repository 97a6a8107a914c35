// Shared by add_s8 and mul_s8: build.rs appends this file to each. The bindings, the
// inputs' loads and `element` for each_byte_s8.wgsl; the kernel gives
// `combine(x1, x2) -> i32`, the output element (clamped to int8) of the raw int8 inputs
// `x1` and `x2`, from parameter words 12 on. Without broadcasting an element reads only its
// own inputs, so the output may alias an input.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), then the kernel's.

@group(0) @binding(0) var<storage, read> input1: array<u32>;
@group(0) @binding(1) var<storage, read> input2: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

const OUT: u32 = 2u;

// Whether both inputs have the output's shape (no index arithmetic then).
var<private> ELEMENTWISE: bool;

fn begin() -> u32 {
    let shape = broadcast_shape();
    ELEMENTWISE = shape.elementwise;
    return shape.n;
}

fn input1_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input1[b / 4u], b % 4u);
}

fn input2_s8(i: u32) -> i32 {
    let b = base_byte(1u) + i;
    return s8_of(input2[b / 4u], b % 4u);
}

fn element(e: u32) -> i32 {
    var ia = e;
    var ib = e;
    if !ELEMENTWISE {
        let ab = input_indices(e);
        ia = ab.x;
        ib = ab.y;
    }
    return combine(input1_s8(ia), input2_s8(ib));
}
