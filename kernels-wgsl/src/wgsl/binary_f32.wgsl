// Shared by the broadcasting float binary kernels (add_f32 and mul_f32 given constants):
// build.rs appends this file to each. The kernel gives `combine(a, b)`, one IEEE
// operation; `broadcast_f32` clamps it to [act_min, act_max]. Each invocation computes
// whole output elements; without broadcasting it reads only the input elements of its
// own, so the output may alias an input. The bindings are pair_f32.wgsl's.
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
        out[out0 + e] = clamp_f32(combine(a[a0 + ab.x], b[b0 + ab.y]), lo, hi);
    }
}
