// dequantize_s8_f32: ember-kernels' `DequantizeS8F32` (TFLM's reference `Dequantize` of
// int8). dequantize_f32.wgsl holds the bindings and the loop.

// Input element `e`, sign-extended.
fn input_element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    return s8_of(input[b / 4u], b % 4u);
}
