// average_pool2d_s8: ember-kernels' `AveragePool2dS8` (TFLM's reference_integer_ops
// `AveragePool`). Each invocation computes whole words of the output (up to 4 outputs),
// keeping the bytes of a word that lie outside the output.
//
// Parameter words: 0..=11 the window (pool_window.wgsl), 12 act_min, 13 act_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

fn input_s8(i: u32) -> i32 {
    let b = base_byte(0u) + i;
    return s8_of(input[b / 4u], b % 4u);
}

// Outputs of at most this many words whose windows take at least this many cells get a
// workgroup per word, its invocations splitting each window (as `ops.rs`'s `pool_lanes`).
const SPLIT_MAX_WORDS: u32 = 4096u;
const SPLIT_MIN_CELLS: u32 = 16u;

// The window cell (`fy`, `fx`), which lies inside the input.
fn cell(w: Window, fy: i32, fx: i32) -> i32 {
    return input_s8(cell_index(w, fy, fx));
}

// The window's sum divided by its cell count, rounding half away from zero, clamped.
fn average(w: Window, acc: i32) -> i32 {
    let count = max(max(w.fy1 - w.fy0, 0) * max(w.fx1 - w.fx0, 0), 1);
    var avg: i32;
    if acc > 0 {
        avg = (acc + count / 2) / count;
    } else {
        avg = (acc - count / 2) / count;
    }
    return clamp_s8(avg, param_i32(12u), param_i32(13u));
}

// Output `e`: the wrapping int32 sum of the window's cells inside the input, averaged.
fn element(e: u32) -> i32 {
    let w = window_of(e);
    var acc = 0;
    for (var fy = w.fy0; fy < w.fy1; fy++) {
        for (var fx = w.fx0; fx < w.fx1; fx++) {
            acc += cell(w, fy, fx);
        }
    }
    return average(w, acc);
}

// Invocation `lane` of `per_word`'s share of output `e`'s sum: cells `lane`,
// `lane + per_word`, ... of the clipped window, row by row.
fn partial_sum(e: u32, lane: u32, per_word: u32) -> i32 {
    let w = window_of(e);
    let cols = max(w.fx1 - w.fx0, 0);
    let cells = max(w.fy1 - w.fy0, 0) * cols;
    var acc = 0;
    for (var r = i32(lane); r < cells; r += i32(per_word)) {
        acc += cell(w, w.fy0 + r / cols, w.fx0 + r % cols);
    }
    return acc;
}

fn word_partial(w: u32, start: u32, n: u32, sub: u32, per_word: u32) -> vec4<i32> {
    return bytes_partial(w, start, n, sub, per_word);
}

fn finish_element(e: u32, sum: i32) -> i32 {
    return average(window_of(e), sum);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let n = pool_outputs();
    if n == 0u {
        return;
    }
    let start = base_byte(1u);
    let words = words_of(start, n);
    // Few outputs with large windows: a workgroup per word, its invocations splitting each
    // window (the driver's `pool_lanes` makes the same choice for the grid).
    if (n + 3u) / 4u <= SPLIT_MAX_WORDS && param(6u) * param(7u) >= SPLIT_MIN_CELLS {
        split_words(id, count, lane, 64u, start, n);
        return;
    }
    let me = stride_of(id, count, lane);
    for (var w = words.first + me.index; w <= words.last; w += me.total) {
        var word = output[w];
        for (var l = 0u; l < 4u; l++) {
            let b = w * 4u + l;
            if b >= start && b < start + n {
                word = with_byte(word, l, element(b - start));
            }
        }
        output[w] = word;
    }
}
