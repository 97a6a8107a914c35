// comparison: ember-kernels' `Comparison` (TFLM's EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL): one bool byte per pair of broadcast inputs. float32 and int32 compare the
// raw values, a float NaN unequal to everything and ordered with nothing (tested on its bits:
// a device may fold NaN comparisons); int8 compares each value rescaled as TFLM does,
// `((v + offset) << 8)` times a multiplier below one. Inputs are read as bytes, so an
// element may sit at any offset. each_byte_s8.wgsl holds the loop.
//
// Parameter words: 0..=11 the broadcast shape (broadcast.wgsl), 12 the predicate (0 equal,
// 1 not equal, 2 less, 3 less or equal, 4 greater, 5 greater or equal), 13 the kind (0 int8,
// 1 int32, 2 float32), 14..=16 input 1's offset, multiplier and shift, 17..=19 input 2's.

@group(0) @binding(0) var<storage, read> input1: array<u32>;
@group(0) @binding(1) var<storage, read> input2: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

const OUT: u32 = 2u;

var<private> ELEMENTWISE: bool;

fn begin() -> u32 {
    let shape = broadcast_shape();
    ELEMENTWISE = shape.elementwise;
    return shape.n;
}

fn input1_byte(b: u32) -> u32 {
    return (input1[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

fn input2_byte(b: u32) -> u32 {
    return (input2[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

// Element `i` of input 1 (`size` bytes, little-endian) in the low bytes of a word.
fn input1_word(i: u32, size: u32) -> u32 {
    let start = base_byte(0u) + i * size;
    var word = 0u;
    for (var k = 0u; k < size; k++) {
        word |= input1_byte(start + k) << (8u * k);
    }
    return word;
}

fn input2_word(i: u32, size: u32) -> u32 {
    let start = base_byte(1u) + i * size;
    var word = 0u;
    for (var k = 0u; k < size; k++) {
        word |= input2_byte(start + k) << (8u * k);
    }
    return word;
}

// The int8 value in the low byte of `word`, rescaled by the scaling at parameter `at`.
fn rescaled(word: u32, at: u32) -> i32 {
    let value = bitcast<i32>(word << 24u) >> 24u;
    let shifted = (value + param_i32(at)) << 8u;
    return multiply_by_quantized_multiplier(shifted, param_i32(at + 1u), param_i32(at + 2u));
}

// -1, 0 or 1 as `a` is below, equal to or above `b`.
fn order_i32(a: i32, b: i32) -> i32 {
    return select(select(0, 1, a > b), -1, a < b);
}

fn is_nan_bits(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

// The float order of two non-NaN values from their bits (+0 and -0 equal).
fn order_f32(a: u32, b: u32) -> i32 {
    let magnitude_a = a & 0x7fffffffu;
    let magnitude_b = b & 0x7fffffffu;
    if magnitude_a == 0u && magnitude_b == 0u {
        return 0;
    }
    // Sign-magnitude to a monotonic signed key.
    let key_a = select(i32(magnitude_a), -i32(magnitude_a), (a >> 31u) == 1u);
    let key_b = select(i32(magnitude_b), -i32(magnitude_b), (b >> 31u) == 1u);
    return order_i32(key_a, key_b);
}

fn holds(order: i32) -> bool {
    switch param(12u) {
        case 0u: { return order == 0; }
        case 1u: { return order != 0; }
        case 2u: { return order < 0; }
        case 3u: { return order <= 0; }
        case 4u: { return order > 0; }
        default: { return order >= 0; }
    }
}

fn element(e: u32) -> i32 {
    var ia = e;
    var ib = e;
    if !ELEMENTWISE {
        let ab = input_indices(e);
        ia = ab.x;
        ib = ab.y;
    }
    let kind = param(13u);
    if kind == 0u {
        return select(0, 1, holds(order_i32(rescaled(input1_word(ia, 1u), 14u), rescaled(input2_word(ib, 1u), 17u))));
    }
    let a = input1_word(ia, 4u);
    let b = input2_word(ib, 4u);
    if kind == 1u {
        return select(0, 1, holds(order_i32(bitcast<i32>(a), bitcast<i32>(b))));
    }
    if is_nan_bits(a) || is_nan_bits(b) {
        // Only NOT_EQUAL holds with a NaN.
        return select(0, 1, param(12u) == 1u);
    }
    return select(0, 1, holds(order_f32(a, b)));
}
