// tanh_f32: ember-kernels' `TanhF32` (`tanhf`). Near zero, where `(e^2x - 1) / (e^2x + 1)`
// would lose digits to cancellation, the odd series to x^9 (its error below 1e-12 of the
// value for |x| < 0.125); beyond, that quotient with the device's `exp`; ±1 from |x| > 9
// (within 6e-8 of `tanhf` there). NaN passes through where the device keeps NaN (these
// modules do not ask for `SignedZeroInfNanPreserve`). One element per invocation; the
// output may alias the input.
//
// Parameter words: 0 len.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

fn tanh_of(x: f32) -> f32 {
    let a = abs(x);
    if a < 0.125 {
        let x2 = x * x;
        return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0
            + x2 * (62.0 / 2835.0)))));
    }
    if a > 9.0 {
        return sign(x);
    }
    let e = exp(2.0 * a);
    let t = (e - 1.0) / (e + 1.0);
    return select(t, -t, x < 0.0);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = param(0u);
    let in0 = base_byte(0u) / 4u;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        output[out0 + e] = tanh_of(input[in0 + e]);
    }
}
