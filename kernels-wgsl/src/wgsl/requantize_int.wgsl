// requantize_int: ember-kernels' `RequantizeInt` (TFLM's QUANTIZE between quantized integers
// with an int16 or int32 side, its `Requantize`): `clamp(MultiplyByQuantizedMultiplier(x -
// input_zero_point) + output_zero_point)` to the output type, the subtraction and addition
// wrapping, between int8, int16 and int32 (type words 0 to 2). each_byte_s8.wgsl runs the
// loop over the output's bytes (each byte computes its element); the output must not alias
// the input.
//
// Parameter words: 0 len, 1 the input's type, 2 the output's type, 3 input_zero_point,
// 4 output_zero_point, 5 multiplier, 6 shift.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const OUT: u32 = 1u;

fn size_of_type(code: u32) -> u32 {
    return select(select(4u, 2u, code == 1u), 1u, code == 0u);
}

fn input_byte(b: u32) -> u32 {
    return (input[b / 4u] >> (8u * (b % 4u))) & 0xffu;
}

// Input element `e`, sign-extended.
fn input_element(e: u32, size: u32) -> i32 {
    let b = base_byte(0u) + e * size;
    var word = 0u;
    for (var k = 0u; k < size; k++) {
        word |= input_byte(b + k) << (8u * k);
    }
    let unused = 32u - 8u * size;
    return bitcast<i32>(word << unused) >> unused;
}

fn begin() -> u32 {
    return param(0u) * size_of_type(param(2u));
}

// Byte `i` of the output: byte `i % size` (little-endian) of element `i / size`.
fn element(i: u32) -> i32 {
    let size = size_of_type(param(2u));
    let x = input_element(i / size, size_of_type(param(1u)));
    let centered = bitcast<i32>(bitcast<u32>(x) - param(3u));
    let scaled = multiply_by_quantized_multiplier(centered, param_i32(5u), param_i32(6u));
    let v = bitcast<i32>(bitcast<u32>(scaled) + param(4u));
    var clamped = v;
    switch param(2u) {
        case 0u: {
            clamped = clamp(v, -128, 127);
        }
        case 1u: {
            clamped = clamp(v, -32768, 32767);
        }
        default: {}
    }
    return clamped >> (8u * (i % size));
}
