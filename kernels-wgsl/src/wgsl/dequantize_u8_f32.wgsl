// dequantize_u8_f32: ember-kernels' `DequantizeU8F32` (TFLM's reference `Dequantize` of
// uint8). dequantize_f32.wgsl holds the bindings and the loop.

// Input element `e`.
fn input_element(e: u32) -> i32 {
    let b = base_byte(0u) + e;
    return i32((input[b / 4u] >> ((b % 4u) * 8u)) & 0xffu);
}
