// softmax_f32: row-wise softmax of a rows × cols matrix, max-subtracted, the differences
// times beta (TFLite's float SOFTMAX), exactly hal-local's sequence per row: the max (NaN
// skipped, as f32::max does), then e = exp_f32((x - max) * beta) stored and summed left to
// right, then each stored e divided by the sum. Each workgroup takes its share of the rows;
// the 64 lanes stride over them, one lane per row.
//
// Parameter words: 0 rows, 1 cols, 2 beta bits (the driver pushes 1.0 where the dispatch
// leaves it out).

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let rows = param(0u);
    let cols = param(1u);
    let beta = bitcast<f32>(param(2u));
    let share = share_of(rows, id, count);
    let items = share.end - share.start;
    var j = lane;
    loop {
        if j >= items {
            break;
        }
        let first = (share.start + j) * cols;
        let src_at = base_word(0u) + first;
        let dst_at = base_word(1u) + first;
        var row_max = bitcast<f32>(0xff800000u);
        for (var i = 0u; i < cols; i += 1u) {
            let v = src[src_at + i];
            if v > row_max {
                row_max = v;
            }
        }
        var sum = 0.0;
        for (var i = 0u; i < cols; i += 1u) {
            let e = exp_f32((src[src_at + i] - row_max) * beta);
            sum = sum + e;
            out[dst_at + i] = e;
        }
        for (var i = 0u; i < cols; i += 1u) {
            out[dst_at + i] = out[dst_at + i] / sum;
        }
        if items - j <= 64u {
            break;
        }
        j += 64u;
    }
}
