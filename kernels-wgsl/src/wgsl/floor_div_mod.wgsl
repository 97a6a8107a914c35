// Shared by floor_div_f32 and floor_mod_f32: build.rs appends this file to each. Their
// bindings (the float binary ops' two inputs and output, read and written as bits), their
// loop, and the operands' exact integer parts. The kernel gives `combine_bits(a, b)`, the
// output's bits of the inputs' bits, computed on the mantissas as integers wherever it can
// be: Vulkan bounds neither OpFDiv nor OpFRem to the exact result, and a device may flush
// subnormals or drop a NaN's bits, so no float operation touches a value that must come out
// exact. The clamp range (words 12 and 13) is infinite for both ops: not applied, so a
// signed zero and a subnormal pass as they are. Each invocation computes whole output
// elements; without broadcasting it reads only the input elements of its own, so the
// output may alias an input.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 act_min bits,
// 13 act_max bits.

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

fn broadcast_bits(id: vec3<u32>, count: vec3<u32>, lane: u32) {
    let shape = broadcast_shape();
    let a0 = base_byte(0u) / 4u;
    let b0 = base_byte(1u) / 4u;
    let out0 = base_byte(2u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < shape.n; e += me.total) {
        var ab = vec2<u32>(e, e);
        if !shape.elementwise {
            ab = input_indices(e);
        }
        out[out0 + e] = combine_bits(a[a0 + ab.x], b[b0 + ab.y]);
    }
}

const F32_NAN: u32 = 0x7fc00000u;
const F32_INF: u32 = 0x7f800000u;
const F32_SIGN: u32 = 0x80000000u;

// A finite nonzero magnitude `m · 2^e`, `m` normalized to [2^23, 2^24) (a subnormal's
// fraction shifted up, its exponent below -149).
struct FloatParts {
    m: u32,
    e: i32,
}

// The parts of the magnitude bits `bits` (sign clear, finite, nonzero).
fn float_parts(bits: u32) -> FloatParts {
    let field = bits >> 23u;
    let fraction = bits & 0x7fffffu;
    if field == 0u {
        let shift = 23u - firstLeadingBit(fraction);
        return FloatParts(fraction << shift, -149 - i32(shift));
    }
    return FloatParts(fraction | 0x800000u, i32(field) - 150);
}

// The magnitude bits of `r · 2^e` (`0 < r < 2^24`), which the caller knows a float holds
// exactly (normal or subnormal).
fn magnitude_bits(r: u32, e: i32) -> u32 {
    // `r · 2^e` is `(r · 2^t) · 2^-149`: the bits of a subnormal, or of the smallest
    // exponent's normals, are that integer.
    let t = e + 149;
    if t < 0 {
        return r >> u32(-t);
    }
    let lead = firstLeadingBit(r);
    if lead + u32(t) <= 23u {
        return r << u32(t);
    }
    // Normalized: `r << s` has bit 23 set, the implicit bit, which adds one to the exponent
    // field `t - s`.
    let s = 23u - lead;
    return ((u32(t) - s) << 23u) + (r << s);
}
