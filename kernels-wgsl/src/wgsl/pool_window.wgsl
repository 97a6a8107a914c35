// Shared by the pooling kernels (average_pool2d_s8, max_pool2d_s8, average_pool2d_f32,
// max_pool2d_f32): build.rs appends this file to each. Output element `e` of
// `[batches, output_height, output_width, depth]` as its window, clipped to the input.
//
// Parameter words: 0 batches, 1 input_height, 2 input_width, 3 depth, 4 output_height,
// 5 output_width, 6 filter_height, 7 filter_width, 8 stride_height, 9 stride_width,
// 10 pad_height, 11 pad_width, then the kernel's.

// A window: the rows `fy0..fy1` and columns `fx0..fx1` of the filter that fall inside the
// input.
struct Window {
    // `batch * input_height`, and the input row and column of the filter's (0, 0) cell
    // (which may lie outside).
    row0: i32,
    x0: i32,
    y0: i32,
    // The channel.
    c: u32,
    fy0: i32,
    fy1: i32,
    fx0: i32,
    fx1: i32,
}

// The pooled output's element count.
fn pool_outputs() -> u32 {
    return param(0u) * param(4u) * param(5u) * param(3u);
}

fn window_of(e: u32) -> Window {
    let ih = param_i32(1u);
    let iw = param_i32(2u);
    let d = param(3u);
    let oh = param(4u);
    let ow = param(5u);
    let pixel = e / d;
    let ox = pixel % ow;
    let oy = (pixel / ow) % oh;
    let b = pixel / ow / oh;
    let y0 = bitcast<i32>(oy * param(8u)) - param_i32(10u);
    let x0 = bitcast<i32>(ox * param(9u)) - param_i32(11u);
    return Window(
        i32(b) * ih,
        x0,
        y0,
        e % d,
        max(-y0, 0),
        min(param_i32(6u), ih - y0),
        max(-x0, 0),
        min(param_i32(7u), iw - x0),
    );
}

// The input element index of the window cell (`fy`, `fx`), which lies inside the input.
fn cell_index(w: Window, fy: i32, fx: i32) -> u32 {
    return (u32(w.row0 + w.y0 + fy) * param(2u) + u32(w.x0 + fx)) * param(3u) + w.c;
}
