// mean_s8: ember-kernels' `MeanS8` (TFLM's reference `QuantizedMeanOrSum` for MEAN): the
// multiplier divided by the count. quantized_mean_or_sum.wgsl holds the bindings and loop.
//
// Parameter words: mean_shape.wgsl's (`rank + 2` of them), then input_zero_point,
// output_zero_point, multiplier, shift.

const FOLD_COUNT: bool = true;
