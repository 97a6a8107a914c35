// sum_f32: ember-kernels' `SumF32` (TFLM's float SUM, `ReduceGeneric`): `0 + x0 + x1 + …`
// in input order. reduce_f32.wgsl holds the bindings and the loop.

const INITIAL: f32 = 0.0;

fn reduce(current: f32, x: f32) -> f32 {
    return current + x;
}
