// quantize_f32_s16: ember-kernels' `QuantizeF32S16` (TFLM's QUANTIZE from float to int16, its
// `AffineQuantize`): `clamp(i32(roundf(x / scale)) + zero_point, -32768, 32767)`, as
// quantize_f32_s8 (affine_quantize.wgsl) but clamped to int16. each_byte_s8.wgsl runs the
// loop over the output's bytes, two to an element (each byte computes its element); the output
// must not alias the input.
//
// Parameter words: 0 len, 1 scale bits, 2 zero_point.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u) * 2u;
}

// Byte `i` of the output: byte `i % 2` (little-endian) of element `i / 2`.
fn element(i: u32) -> i32 {
    let x = input[base_byte(0u) / 4u + i / 2u];
    let v = clamp(affine_quantize(x, bitcast<f32>(param(1u)), param(2u)), -32768, 32767);
    return v >> (8u * (i % 2u));
}
