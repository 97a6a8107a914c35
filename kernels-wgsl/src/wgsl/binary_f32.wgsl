// Shared by the broadcasting float binary kernels (add_f32 and mul_f32 given constants,
// sub_f32, div_f32, squared_difference_f32, maximum_f32, minimum_f32): build.rs appends
// this file to each. The kernel gives `combine(a, b)`; `broadcast_f32` clamps it to
// [act_min, act_max] (a NaN passes). Each invocation computes whole output elements;
// without broadcasting it reads only the input elements of its own, so the output may
// alias an input. The bindings are pair_f32.wgsl's.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 act_min bits,
// 13 act_max bits.

fn broadcast_f32(id: vec3<u32>, count: vec3<u32>, lane: u32) {
    let shape = broadcast_shape();
    let a0 = base_byte(0u) / 4u;
    let b0 = base_byte(1u) / 4u;
    let out0 = base_byte(2u) / 4u;
    let lo = bitcast<f32>(param(12u));
    let hi = bitcast<f32>(param(13u));
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < shape.n; e += me.total) {
        var ab = vec2<u32>(e, e);
        if !shape.elementwise {
            ab = input_indices(e);
        }
        let v = combine(a[a0 + ab.x], b[b0 + ab.y]);
        // A NaN passes the clamp, tested on its bits: a device that may assume no NaN (these
        // modules do not ask for SignedZeroInfNanPreserve) folds the clamp's comparisons
        // into min and max, which give a bound instead (an NVIDIA H200 does).
        out[out0 + e] = select(clamp_f32(v, lo, hi), v, is_nan(v));
    }
}
