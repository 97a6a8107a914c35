// maximum_s8: ember-kernels' `MaximumS8` (TFLM's int8 MAXIMUM on the raw values,
// `a > b ? a : b`). binary_s8.wgsl holds the bindings and loads, each_byte_s8.wgsl the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl).

fn combine(x1: i32, x2: i32) -> i32 {
    return select(x2, x1, x1 > x2);
}
