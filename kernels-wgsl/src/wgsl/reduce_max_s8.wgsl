// reduce_max_s8: ember-kernels' `ReduceMaxS8` (TFLM's int8 REDUCE_MAX on the raw values,
// from -128). reduce_s8.wgsl holds the bindings and the reduction, each_byte_s8.wgsl the
// loop.

const INITIAL: i32 = -128;

fn reduce(current: i32, x: i32) -> i32 {
    return max(current, x);
}
