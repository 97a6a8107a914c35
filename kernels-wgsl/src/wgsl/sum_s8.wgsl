// sum_s8: ember-kernels' `SumS8` (TFLM's reference `QuantizedMeanOrSum` for SUM): the
// multiplier as it is. quantized_mean_or_sum.wgsl holds the bindings and loop.
//
// Parameter words: mean_shape.wgsl's (`rank + 2` of them), then input_zero_point,
// output_zero_point, multiplier, shift.

const FOLD_COUNT: bool = false;
