// reduce_min_s8: ember-kernels' `ReduceMinS8` (TFLM's int8 REDUCE_MIN on the raw values,
// from 127). reduce_s8.wgsl holds the bindings and the reduction, each_byte_s8.wgsl the
// loop.

const INITIAL: i32 = 127;

fn reduce(current: i32, x: i32) -> i32 {
    return min(current, x);
}
