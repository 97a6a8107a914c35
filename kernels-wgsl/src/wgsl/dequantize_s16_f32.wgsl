// dequantize_s16_f32: ember-kernels' `DequantizeS16F32` (TFLM's reference `Dequantize` of
// int16). dequantize_f32.wgsl holds the bindings and the loop.

// Input element `e`, sign-extended. The binding starts at an even byte (the driver checks its
// 2-byte elements' alignment), so an element is the low or the high half of one word.
fn input_element(e: u32) -> i32 {
    let b = base_byte(0u) + 2u * e;
    return bitcast<i32>(input[b / 4u] << (16u - 8u * (b % 4u))) >> 16u;
}
