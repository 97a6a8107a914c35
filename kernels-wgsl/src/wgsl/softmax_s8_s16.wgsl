// softmax_s8_s16: ember-kernels' `SoftmaxS8S16` (TFLM's reference_ops
// `Softmax<int8_t, int16_t>`): `softmax_rows.wgsl` and `rows_s8.wgsl`, appended by
// build.rs, with int16 outputs from an even byte.

const OUT_BITS: i32 = 16;
const OUT_MIN: i32 = -32768;
const OUT_MAX: i32 = 32767;
