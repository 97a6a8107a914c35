// Shared by every kernel: build.rs appends this file after each kernel's own source, so a
// kernel's line numbers stay its own.

// The 128-byte push-constant block, as 32 words in eight vectors: words 0..PARAMS_AT
// `base[i]`, the byte offset of binding `i` inside its bound range; words PARAMS_AT..31 the
// kernel's parameter words, exactly as the dispatch gives them (`ember-kernels` encodes an
// op's; a built-in kernel's are its contract's constants). build.rs defines
// `PARAMS_AT` for each kernel: 6, or one word per binding where a kernel has more.
struct Push {
    words: array<vec4<u32>, 8>,
}

// naga 28 spells the push-constant address space `immediate`.
var<immediate> pc: Push;

// Word `w` (0..31) of the push constants.
fn pc_word(w: u32) -> u32 {
    return pc.words[w / 4u][w % 4u];
}

// The byte offset of binding `i` (below `PARAMS_AT`) inside its bound range: a multiple of 4
// for the bindings a kernel reads as 32-bit words (the driver checks it as hal-local does).
fn base_byte(i: u32) -> u32 {
    return pc_word(i);
}

// The word offset of binding `i`, for a binding the kernel reads as 32-bit words (its byte
// offset is then a multiple of 4: the driver checks it).
fn base_word(i: u32) -> u32 {
    return base_byte(i) / 4u;
}

// The whole words binding `i` holds, from `arrayLength` of its array of 32-bit elements: the
// driver binds the range from the descriptor's start to the binding's end, not rounded up
// (an empty binding as the end of a buffer), for the kernels that count only whole words.
fn words_bound(array_length: u32, i: u32) -> u32 {
    return array_length - base_word(i);
}

// The kernel's parameter word `i`.
fn param(i: u32) -> u32 {
    return pc_word(PARAMS_AT + i);
}

fn param_i32(i: u32) -> i32 {
    return bitcast<i32>(param(i));
}

// Byte `lane` (0..3, little-endian) of `word`, sign-extended.
fn s8_of(word: u32, lane: u32) -> i32 {
    return bitcast<i32>(word << ((3u - lane) * 8u)) >> 24u;
}

// The four bytes of `w`, sign-extended, byte 0 first.
fn lanes(w: u32) -> vec4<i32> {
    return bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u);
}

// `word` with byte `lane` replaced by the low 8 bits of `v`.
fn with_byte(word: u32, lane: u32, v: i32) -> u32 {
    let shift = lane * 8u;
    return (word & ~(0xffu << shift)) | ((bitcast<u32>(v) & 0xffu) << shift);
}

// A 64-bit two's complement integer as two words.
struct Wide {
    lo: u32,
    hi: u32,
}

// The full 64-bit product of two `i32`, from 16-bit halves (no 64-bit integers needed).
fn mul_wide(a: i32, b: i32) -> Wide {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let a0 = ua & 0xffffu;
    let a1 = ua >> 16u;
    let b0 = ub & 0xffffu;
    let b1 = ub >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let lo = (p00 & 0xffffu) | (mid << 16u);
    var hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    // The unsigned product, less 2^32·b where a < 0 and 2^32·a where b < 0.
    hi -= select(0u, ub, a < 0);
    hi -= select(0u, ua, b < 0);
    return Wide(lo, hi);
}

// `a + b` where `b` is an `i32` sign-extended to 64 bits.
fn add_wide(a: Wide, b: i32) -> Wide {
    let lo = a.lo + bitcast<u32>(b);
    let carry = select(0u, 1u, lo < a.lo);
    let hi = a.hi + select(0u, 0xffffffffu, b < 0) + carry;
    return Wide(lo, hi);
}

// gemmlowp's `SaturatingRoundingDoublingHighMul`: `(a·b + nudge) / 2^31`, the division
// truncating toward zero as C++'s does, the nudge `2^30` or `1 - 2^30` by the product's sign;
// `MIN·MIN` saturates to `MAX`.
fn srdhm(a: i32, b: i32) -> i32 {
    if a == b && a == i32(-2147483647 - 1) {
        return 2147483647;
    }
    let ab = mul_wide(a, b);
    let nudge = select(1 - (1 << 30u), 1 << 30u, bitcast<i32>(ab.hi) >= 0);
    let v = add_wide(ab, nudge);
    // floor(v / 2^31), then toward zero for a negative v with a remainder.
    let floor = bitcast<i32>((v.hi << 1u) | (v.lo >> 31u));
    let inexact = (v.lo & 0x7fffffffu) != 0u;
    return floor + select(0, 1, bitcast<i32>(v.hi) < 0 && inexact);
}

// gemmlowp's `RoundingDivideByPOT` for `exponent` in 0..31: rounds half away from zero.
fn rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    let mask = bitcast<i32>((1u << exponent) - 1u);
    let remainder = x & mask;
    let threshold = (mask >> 1u) + select(0, 1, x < 0);
    return (x >> exponent) + select(0, 1, remainder > threshold);
}

// TFLM's `MultiplyByQuantizedMultiplier` for `shift` in -31..=30.
fn multiply_by_quantized_multiplier(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = u32(max(shift, 0));
    let right = u32(max(-shift, 0));
    let shifted = bitcast<i32>(bitcast<u32>(x) << left);
    return rounding_divide_by_pot(srdhm(shifted, multiplier), right);
}

// This invocation's index among all of the dispatch's invocations, and their count: an op
// kernel strides over its output words with them, so its result does not depend on the grid.
struct Stride {
    index: u32,
    total: u32,
}

fn stride_of(id: vec3<u32>, count: vec3<u32>, lane: u32) -> Stride {
    let group = id.x + count.x * (id.y + count.y * id.z);
    return Stride(group * 64u + lane, count.x * count.y * count.z * 64u);
}

// The words of a binding that hold its bytes `base..base + n` (`n > 0`): `first..=last`.
struct Words {
    first: u32,
    last: u32,
}

fn words_of(base: u32, n: u32) -> Words {
    return Words(base / 4u, (base + n - 1u) / 4u);
}

fn clamp_s8(v: i32, lo: i32, hi: i32) -> i32 {
    return min(max(v, lo), hi);
}

// ember-kernels' `clamp_f32`: `lo` where `x < lo`, then `hi` where `hi < t` (a NaN passes).
fn clamp_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let t = select(x, lo, x < lo);
    return select(t, hi, hi < t);
}
