// softmax_s8: ember-kernels' `SoftmaxS8` (TFLM's reference_ops `Softmax<int8_t, int8_t>`):
// `softmax_rows.wgsl` and `rows_s8.wgsl`, appended by build.rs, with int8 outputs.

const OUT_BITS: i32 = 8;
const OUT_MIN: i32 = -128;
const OUT_MAX: i32 = 127;
