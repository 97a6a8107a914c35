// Shared by every kernel: build.rs appends this file (and the generated `exp_f32`
// constants) after each kernel's own source, so a kernel's line numbers stay its own.

// The 64-byte push-constant block, as 16 words in four vectors (a layout every address
// space's rules accept): words 0..7 `base[i]`, 8..11 `len[i]`, 12..15 the kernel's constants.
struct Push {
    words: array<vec4<u32>, 4>,
}

// naga 28 spells the push-constant address space `immediate`.
var<immediate> pc: Push;

// Word `w` (0..15) of the push constants.
fn pc_word(w: u32) -> u32 {
    return pc.words[w / 4u][w % 4u];
}

// The element offset of binding `i` inside its bound range.
fn pc_base(i: u32) -> u32 {
    return pc_word(i);
}

// The length of binding `i` (0..3) in whole 4-byte elements.
fn pc_len(i: u32) -> u32 {
    return pc_word(8u + i);
}

// The kernel's own constant `i` (0..3).
fn pc_const(i: u32) -> u32 {
    return pc_word(12u + i);
}

const U32_MAX: u32 = 0xffffffffu;

fn sat_add(a: u32, b: u32) -> u32 {
    let s = a + b;
    return select(s, U32_MAX, s < a);
}

fn sat_mul(a: u32, b: u32) -> u32 {
    if a != 0u && b > U32_MAX / a {
        return U32_MAX;
    }
    return a * b;
}

// A half-open range of work items.
struct Span {
    start: u32,
    end: u32,
}

// hal-local's `Workgroup::share_of(n)`: the workgroup's contiguous slice of `0..n` when `n`
// items are split evenly over every workgroup of the grid in linear order (x fastest).
// hal-local computes in u64; here every product and sum saturates at 2^32 - 1, which gives
// the same slice: a saturated index or total is at least `n`, so the slice is clamped to
// `n` exactly as the u64 value would be.
fn share_of(n: u32, id: vec3<u32>, count: vec3<u32>) -> Span {
    let index = sat_add(id.x, sat_mul(count.x, sat_add(id.y, sat_mul(count.y, id.z))));
    let total = max(sat_mul(sat_mul(count.x, count.y), count.z), 1u);
    let whole = n / total;
    let rest = n % total;
    let per = whole + select(0u, 1u, rest != 0u);
    let start = min(sat_mul(index, per), n);
    return Span(start, start + min(per, n - start));
}

// hal-local's ReLU (`if x <= 0.0 { 0.0 } else { x }`) on the bits: negatives, -0.0 and
// -inf become +0.0, NaN and everything positive pass through unchanged (payload included),
// independent of how the device treats subnormals.
fn relu_bits(u: u32) -> u32 {
    if (u & 0x7fffffffu) > 0x7f800000u {
        return u;
    }
    return select(u, 0u, u >= 0x80000000u);
}

