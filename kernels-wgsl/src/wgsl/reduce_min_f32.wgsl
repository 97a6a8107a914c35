// reduce_min_f32: ember-kernels' `ReduceMinF32` (TFLM's float REDUCE_MIN: `in < current ?
// in : current` from the highest float), a NaN input told by its bits (a device may assume
// there are none) so that it never replaces a number. reduce_f32.wgsl holds the bindings
// and the loop.

const INITIAL: f32 = 3.40282347e+38;

fn reduce(current: f32, x: f32) -> f32 {
    if is_nan(x) || is_nan(current) {
        return current;
    }
    return select(current, x, x < current);
}
