// Shared by the broadcasting binary ops (ember-kernels' `BroadcastShape`): build.rs appends
// this file to each of them. Parameter words 0..=5 are input 1's dimensions, 6..=11 input
// 2's, right-aligned with leading 1s; a dimension of 1 broadcasts against the other's.

// The output's element count, and whether both inputs have the output's shape.
struct Broadcast {
    n: u32,
    elementwise: bool,
}

fn broadcast_shape() -> Broadcast {
    var n = 1u;
    var elementwise = true;
    for (var i = 0u; i < 6u; i++) {
        n *= max(param(i), param(i + 6u));
        elementwise = elementwise && param(i) == param(i + 6u);
    }
    return Broadcast(n, elementwise);
}

// The indices into input 1 and input 2 of output element `e`.
fn input_indices(e: u32) -> vec2<u32> {
    var rest = e;
    var a = 0u;
    var b = 0u;
    var stride_a = 1u;
    var stride_b = 1u;
    for (var i = 5; i >= 0; i--) {
        let da = param(u32(i));
        let db = param(u32(i) + 6u);
        let dout = max(da, db);
        let idx = rest % dout;
        rest = rest / dout;
        if da != 1u {
            a += idx * stride_a;
        }
        if db != 1u {
            b += idx * stride_b;
        }
        stride_a *= da;
        stride_b *= db;
    }
    return vec2<u32>(a, b);
}
