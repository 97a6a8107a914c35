// mlp_softmax_f32: per row of x, y = softmax(relu(x·w1 + b1)·w2 + b2), hal-local's sequence
// exactly: each hidden unit and logit is the sum over its inputs in increasing order, in f32,
// of input * weight starting from 0.0 (each product and sum rounded on its own), then its
// bias (then ReLU for a hidden unit); then softmax_f32's row. Each workgroup takes its share
// of the rows, one row at a time, holding the row's hidden layer and logits in workgroup
// memory; lane j owns hidden units and logits j, j + 64, ...
//
// Written for latency. A small model's run is a chain of memory loads, and a weight a
// submission reads first comes from DRAM (about 0.6 µs on an H100) while a lane's next load
// waits for the last unless it is issued before the last is used. So each lane issues its
// weight loads 32 at a time in straight-line code (BATCH; a loop of loads into a private
// array is not issued that way), and x is read a chunk at a time by all lanes at once into
// workgroup memory.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w1: array<f32>;
@group(0) @binding(2) var<storage, read> b1: array<f32>;
@group(0) @binding(3) var<storage, read> w2: array<f32>;
@group(0) @binding(4) var<storage, read> b2: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

// hal_core::contract::MLP_MAX_WIDTH: the most hidden units and outputs.
const WIDTH: u32 = 512u;
const CHUNK_K: u32 = 64u;
// Weight loads a lane issues before it sums them: 8 vec4s in dot_w1 and dot_w2.
const BATCH: u32 = 32u;

// A chunk of the row of x (CHUNK_K), then the hidden layer (WIDTH): both layers' inputs.
var<workgroup> acts: array<f32, CHUNK_K + WIDTH>;
const HIDDEN_AT: u32 = CHUNK_K; // where the hidden layer starts in acts
var<workgroup> logits: array<f32, WIDTH>;
var<workgroup> total: f32;

// acts[at..at + 4].
fn acts4(at: u32) -> vec4<f32> {
    return vec4<f32>(acts[at], acts[at + 1u], acts[at + 2u], acts[at + 3u]);
}

// acc + a.x * w.x + a.y * w.y + a.z * w.z + a.w * w.w, left to right.
fn sum4(acc: f32, a: vec4<f32>, w: vec4<f32>) -> f32 {
    return acc + a.x * w.x + a.y * w.y + a.z * w.z + a.w * w.w;
}

// w1[at], w1[at + s], w1[at + 2s], w1[at + 3s].
fn w1x4(at: u32, s: u32) -> vec4<f32> {
    return vec4<f32>(w1[at], w1[at + s], w1[at + 2u * s], w1[at + 3u * s]);
}

// w2[at], w2[at + s], w2[at + 2s], w2[at + 3s].
fn w2x4(at: u32, s: u32) -> vec4<f32> {
    return vec4<f32>(w2[at], w2[at + s], w2[at + 2u * s], w2[at + 3u * s]);
}

// acc + Σ acts[first + t] * w1[at + t·s] over t < count, in order.
fn dot_w1(acc_in: f32, first: u32, count: u32, at: u32, s: u32) -> f32 {
    var acc = acc_in;
    var t = 0u;
    for (; t + BATCH <= count; t += BATCH) {
        let p = at + t * s;
        let q = 4u * s;
        let w0 = w1x4(p, s);
        let w1_ = w1x4(p + q, s);
        let w2_ = w1x4(p + 2u * q, s);
        let w3 = w1x4(p + 3u * q, s);
        let w4 = w1x4(p + 4u * q, s);
        let w5 = w1x4(p + 5u * q, s);
        let w6 = w1x4(p + 6u * q, s);
        let w7 = w1x4(p + 7u * q, s);
        let a = first + t;
        acc = sum4(acc, acts4(a), w0);
        acc = sum4(acc, acts4(a + 4u), w1_);
        acc = sum4(acc, acts4(a + 8u), w2_);
        acc = sum4(acc, acts4(a + 12u), w3);
        acc = sum4(acc, acts4(a + 16u), w4);
        acc = sum4(acc, acts4(a + 20u), w5);
        acc = sum4(acc, acts4(a + 24u), w6);
        acc = sum4(acc, acts4(a + 28u), w7);
    }
    for (; t + 4u <= count; t += 4u) {
        acc = sum4(acc, acts4(first + t), w1x4(at + t * s, s));
    }
    for (; t < count; t += 1u) {
        acc = acc + acts[first + t] * w1[at + t * s];
    }
    return acc;
}

// dot_w1 over w2: 0.0 + Σ acts[first + t] * w2[at + t·s] over t < count, in order.
fn dot_w2(first: u32, count: u32, at: u32, s: u32) -> f32 {
    var acc = 0.0;
    var t = 0u;
    for (; t + BATCH <= count; t += BATCH) {
        let p = at + t * s;
        let q = 4u * s;
        let w0 = w2x4(p, s);
        let w1_ = w2x4(p + q, s);
        let w2_ = w2x4(p + 2u * q, s);
        let w3 = w2x4(p + 3u * q, s);
        let w4 = w2x4(p + 4u * q, s);
        let w5 = w2x4(p + 5u * q, s);
        let w6 = w2x4(p + 6u * q, s);
        let w7 = w2x4(p + 7u * q, s);
        let a = first + t;
        acc = sum4(acc, acts4(a), w0);
        acc = sum4(acc, acts4(a + 4u), w1_);
        acc = sum4(acc, acts4(a + 8u), w2_);
        acc = sum4(acc, acts4(a + 12u), w3);
        acc = sum4(acc, acts4(a + 16u), w4);
        acc = sum4(acc, acts4(a + 20u), w5);
        acc = sum4(acc, acts4(a + 24u), w6);
        acc = sum4(acc, acts4(a + 28u), w7);
    }
    for (; t + 4u <= count; t += 4u) {
        acc = sum4(acc, acts4(first + t), w2x4(at + t * s, s));
    }
    for (; t < count; t += 1u) {
        acc = acc + acts[first + t] * w2[at + t * s];
    }
    return acc;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let m = param(0u);
    let k = param(1u);
    let h = param(2u);
    let n = param(3u);
    let share = share_of(m, id, count);
    for (var row = share.start; row < share.end; row += 1u) {
        // The hidden layer, chunk by chunk of x.
        for (var j = lane; j < h; j += 64u) {
            acts[HIDDEN_AT + j] = 0.0;
        }
        for (var k0 = 0u; k0 < k; k0 += CHUNK_K) {
            let kn = min(CHUNK_K, k - k0);
            // Every lane is done with the previous chunk (and row).
            workgroupBarrier();
            if lane < kn {
                acts[lane] = x[base_word(0u) + row * k + k0 + lane];
            }
            workgroupBarrier();
            for (var j = lane; j < h; j += 64u) {
                acts[HIDDEN_AT + j] = dot_w1(acts[HIDDEN_AT + j], 0u, kn, base_word(1u) + k0 * h + j, h);
            }
        }
        for (var j = lane; j < h; j += 64u) {
            let sum = acts[HIDDEN_AT + j] + b1[base_word(2u) + j];
            acts[HIDDEN_AT + j] = bitcast<f32>(relu_bits(bitcast<u32>(sum)));
        }
        workgroupBarrier();
        // The logits, then the row's max as every lane finds it.
        for (var i = lane; i < n; i += 64u) {
            logits[i] = dot_w2(HIDDEN_AT, h, base_word(3u) + i, n) + b2[base_word(4u) + i];
        }
        workgroupBarrier();
        var row_max = bitcast<f32>(0xff800000u);
        for (var i = 0u; i < n; i += 1u) {
            let v = logits[i];
            if v > row_max {
                row_max = v;
            }
        }
        workgroupBarrier();
        for (var i = lane; i < n; i += 64u) {
            logits[i] = exp_f32(logits[i] - row_max);
        }
        workgroupBarrier();
        if lane == 0u {
            var sum = 0.0;
            for (var i = 0u; i < n; i += 1u) {
                sum = sum + logits[i];
            }
            total = sum;
        }
        workgroupBarrier();
        for (var i = lane; i < n; i += 64u) {
            y[base_word(5u) + row * n + i] = logits[i] / total;
        }
    }
}
