// requantize_int: ember-kernels' `RequantizeInt` (TFLM's QUANTIZE between quantized integers
// with an int16 or int32 side, its `Requantize`): `clamp(MultiplyByQuantizedMultiplier(x -
// input_zero_point) + output_zero_point)` to the output type, the subtraction and addition
// wrapping, between int8, int16 and int32 (type words 0 to 2). typed_bytes.wgsl holds the
// bindings and the input's elements, each_byte_s8.wgsl the loop over the output's bytes (each
// byte computes its element); the output must not alias the input.
//
// Parameter words: 0 len, 1 the input's type, 2 the output's type, 3 input_zero_point,
// 4 output_zero_point, 5 multiplier, 6 shift.

// Output element `e` in the low bytes of a word.
fn converted(e: u32) -> u32 {
    let size = size_of_type(param(1u));
    let unused = 32u - 8u * size;
    let x = bitcast<i32>(input_word(e, size) << unused) >> unused;
    let centered = bitcast<i32>(bitcast<u32>(x) - param(3u));
    let scaled = multiply_by_quantized_multiplier(centered, param_i32(5u), param_i32(6u));
    let v = bitcast<i32>(bitcast<u32>(scaled) + param(4u));
    switch param(2u) {
        case 0u: {
            return bitcast<u32>(clamp(v, -128, 127));
        }
        case 1u: {
            return bitcast<u32>(clamp(v, -32768, 32767));
        }
        default: {
            return bitcast<u32>(v);
        }
    }
}
