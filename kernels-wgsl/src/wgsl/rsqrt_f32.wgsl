// rsqrt_f32: ember-kernels' `RsqrtF32` (TFLM's float RSQRT, `1 / sqrt(x)`) with the
// device's `inverseSqrt` (2 ulp), infinity at zero. unary_f32.wgsl holds the bindings and
// the loop.

fn apply(x: f32) -> f32 {
    if x == 0.0 {
        return bitcast<f32>(select(0x7f800000u, 0xff800000u, bitcast<u32>(x) != 0u));
    }
    return inverseSqrt(x);
}
