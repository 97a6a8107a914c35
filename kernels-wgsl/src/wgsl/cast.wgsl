// cast: ember-kernels' `Cast` (TFLM's CAST, `static_cast` element by element) between int8,
// int16, int32 and float32 (type words 0 to 3): integers wrap when they narrow and extend
// their sign when they widen; an integer becomes the nearest float, ties to even (built from
// its bits here: WGSL leaves the rounding of an inexact conversion to the device); a float
// becomes an integer truncated as x86-64's `cvttss2si` does (NaN and values outside `i32`
// give `i32::MIN`), then saturated to int8 or int16. typed_bytes.wgsl holds the bindings and
// the input's elements, each_byte_s8.wgsl the loop; the output must not alias the input.
//
// Parameter words: 0 len, 1 the input's type, 2 the output's type.

// The nearest float to `v`, ties to even.
fn i32_to_f32(v: i32) -> f32 {
    if v > -16777216 && v < 16777216 {
        return f32(v);
    }
    let negative = v < 0;
    let magnitude = select(bitcast<u32>(v), 0u - bitcast<u32>(v), negative);
    let top = 31u - countLeadingZeros(magnitude);
    let shift = top - 23u;
    let kept = magnitude >> shift;
    let rest = magnitude & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    var bits = ((top + 127u) << 23u) + (kept - (1u << 23u));
    if rest > half || (rest == half && (kept & 1u) == 1u) {
        bits += 1u;
    }
    return bitcast<f32>(bits | select(0u, 0x80000000u, negative));
}

// ember-kernels' `f32_to_i32_like_x86` of `trunc(x)`.
fn f32_to_i32_like_x86(x: f32) -> i32 {
    let t = trunc(x);
    if t >= -2147483648.0f && t < 2147483648.0f {
        return i32(t);
    }
    return i32(-2147483647 - 1);
}

// Output element `e` in the low bytes of a word.
fn converted(e: u32) -> u32 {
    let source = param(1u);
    let destination = param(2u);
    let word = input_word(e, size_of_type(source));
    var integer: i32;
    switch source {
        case 0u: {
            integer = bitcast<i32>(word << 24u) >> 24u;
        }
        case 1u: {
            integer = bitcast<i32>(word << 16u) >> 16u;
        }
        case 2u: {
            integer = bitcast<i32>(word);
        }
        default: {
            if destination == 3u {
                return word;
            }
            let truncated = f32_to_i32_like_x86(bitcast<f32>(word));
            switch destination {
                case 0u: {
                    return bitcast<u32>(clamp(truncated, -128, 127));
                }
                case 1u: {
                    return bitcast<u32>(clamp(truncated, -32768, 32767));
                }
                default: {
                    return bitcast<u32>(truncated);
                }
            }
        }
    }
    if destination == 3u {
        return bitcast<u32>(i32_to_f32(integer));
    }
    return bitcast<u32>(integer);
}
