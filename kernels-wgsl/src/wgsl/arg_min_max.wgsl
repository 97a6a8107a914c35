// arg_min_max: ember-kernels' `ArgMinMax` (TFLM's ARG_MAX and ARG_MIN): for every outer and
// inner index, the first index along the axis of the largest (or smallest) value. A NaN,
// told by its bits (a device may assume there are none), never wins and loses to any
// number. One output element per invocation.
//
// Parameter words: 0 float (0 int8, 1 float32), 1 outer, 2 axis_size, 3 inner, 4 is_max.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<i32>;

// Input element `i` as a float (every int8 value is one exactly, in the same order).
fn value(i: u32) -> f32 {
    if param(0u) == 1u {
        return bitcast<f32>(input[base_byte(0u) / 4u + i]);
    }
    let b = base_byte(0u) + i;
    return f32(s8_of(input[b / 4u], b % 4u));
}

fn wins(candidate: f32, current: f32) -> bool {
    if is_nan(candidate) {
        return false;
    }
    if is_nan(current) {
        return true;
    }
    return select(candidate < current, candidate > current, param(4u) == 1u);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let axis_size = param(2u);
    let inner = param(3u);
    let n = param(1u) * inner;
    let out0 = base_byte(1u) / 4u;
    let me = stride_of(id, count, lane);
    for (var e = me.index; e < n; e += me.total) {
        let start = (e / inner) * axis_size * inner + e % inner;
        var best = value(start);
        var best_index = 0u;
        for (var i = 1u; i < axis_size; i++) {
            let candidate = value(start + i * inner);
            if wins(candidate, best) {
                best = candidate;
                best_index = i;
            }
        }
        output[out0 + e] = i32(best_index);
    }
}
