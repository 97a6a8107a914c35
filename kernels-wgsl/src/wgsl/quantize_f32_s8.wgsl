// quantize_f32_s8: ember-kernels' `QuantizeF32S8` (TFLM's QUANTIZE from float to int8, its
// `AffineQuantize`): `clamp(i32(roundf(x / scale)) + zero_point, -128, 127)`, the division
// correctly rounded (div_rn.wgsl), `roundf` taking halves away from zero, the conversion as
// the oracle's x86-64 does it (NaN and values outside `i32` give `i32::MIN`) and the zero
// point's addition wrapping (affine_quantize.wgsl). each_byte_s8.wgsl runs the loop; the
// output must not alias the input (it is written a word of four elements at a time).
//
// Parameter words: 0 len, 1 scale bits, 2 zero_point.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn begin() -> u32 {
    return param(0u);
}

fn element(e: u32) -> i32 {
    let x = input[base_byte(0u) / 4u + e];
    return clamp_s8(affine_quantize(x, bitcast<f32>(param(1u)), param(2u)), -128, 127);
}
