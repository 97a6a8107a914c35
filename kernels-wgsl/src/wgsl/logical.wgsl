// logical: ember-kernels' `Logical` (TFLM's LOGICAL_AND and LOGICAL_OR, and the exclusive or
// LOGICAL_NOT lowers to): one bool byte per pair of broadcast bool inputs, a byte other than 0
// read as true. binary_s8.wgsl holds the bindings and loads, each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 the op (0 and, 1 or,
// 2 exclusive or).

fn combine(x1: i32, x2: i32) -> i32 {
    let a = x1 != 0;
    let b = x2 != 0;
    switch param(12u) {
        case 0u: { return select(0, 1, a && b); }
        case 1u: { return select(0, 1, a || b); }
        default: { return select(0, 1, a != b); }
    }
}
