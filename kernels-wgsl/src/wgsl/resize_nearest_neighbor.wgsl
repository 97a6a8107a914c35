// resize_nearest_neighbor: ember-kernels' `ResizeNearestNeighbor` (TFLM's reference
// `ResizeNearestNeighbor`): each output pixel of an NHWC tensor copies the input pixel
// `nearest` picks along height and width, in f32 as the reference computes it (the scale's
// division correctly rounded by div_rn.wgsl, every other operation one IEEE operation).
// gather_bytes.wgsl moves the elements of 1, 2 or 4 bytes.
//
// Parameter words: 0 elem_bytes, 1 batches, 2 input_height, 3 input_width, 4 depth,
// 5 output_height, 6 output_width, 7 align_corners, 8 half_pixel_centers.

fn output_elements() -> u32 {
    return param(1u) * param(5u) * param(6u) * param(4u);
}

// C's `roundf`: halves away from zero.
fn round_half_away(q: f32) -> f32 {
    let t = trunc(q);
    return select(t, t + sign(q), abs(q - t) >= 0.5f);
}

// TFLM's `GetNearestNeighbor`.
fn nearest(index: u32, input_size: u32, output_size: u32) -> u32 {
    let align = param(7u) == 1u;
    let half = param(8u) == 1u;
    var scale: f32;
    if align && output_size > 1u {
        scale = div_rn(f32(input_size - 1u), f32(output_size - 1u));
    } else {
        scale = div_rn(f32(input_size), f32(output_size));
    }
    let position = (f32(index) + select(0.0f, 0.5f, half)) * scale;
    var picked = i32(select(floor(position), round_half_away(position), align));
    picked = min(picked, i32(input_size) - 1);
    return u32(max(picked, 0));
}

fn source_element(e: u32) -> i32 {
    let depth = param(4u);
    let out_w = param(6u);
    let out_h = param(5u);
    let channel = e % depth;
    let x = (e / depth) % out_w;
    let y = (e / (depth * out_w)) % out_h;
    let batch = e / (depth * out_w * out_h);
    let in_y = nearest(y, param(2u), out_h);
    let in_x = nearest(x, param(3u), out_w);
    return i32(((batch * param(2u) + in_y) * param(3u) + in_x) * depth + channel);
}

fn fill_byte(k: u32) -> u32 {
    return 0u;
}
