// checksum: verifies a window of a constant pool on the device. Binding 0 is the window
// (words of the pool's pattern, see `pattern`), binding 1 two counters that receive, by
// atomic adds, the number of words that differ from the pattern and the wrapping sum of
// every word. Constants 0 and 1 are the low and high halves of the window's first word
// index in the pool. Push-constant layout as Ember's kernels (generic SPIR-V's): words 0..5
// the bindings' byte offsets in their bound ranges, then the constants from word 6; the
// driver binds each range exactly to the binding's end, so the window's words are counted
// from its bound range.

struct Push {
    words: array<vec4<u32>, 8>,
}

var<immediate> pc: Push;

@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;

fn pc_word(w: u32) -> u32 {
    return pc.words[w / 4u][w % 4u];
}

// The pool's word at index hi * 2^32 + lo (the host computes the same in `pool.rs`).
fn pattern(lo: u32, hi: u32) -> u32 {
    var x = (lo * 0x9E3779B1u) ^ (hi * 0x85EBCA77u) ^ 0x5BD1E995u;
    x ^= x >> 15u;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12u;
    return x;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
) {
    let base = pc_word(0u) / 4u;
    let n = arrayLength(&data) - base;
    let first_lo = pc_word(6u);
    let first_hi = pc_word(7u);
    let stride = count.x * 64u;
    var bad = 0u;
    var sum = 0u;
    var i = gid.x;
    loop {
        if i >= n {
            break;
        }
        let lo = first_lo + i;
        let hi = first_hi + select(0u, 1u, lo < first_lo);
        let word = data[base + i];
        if word != pattern(lo, hi) {
            bad += 1u;
        }
        sum += word;
        if n - i <= stride {
            break;
        }
        i += stride;
    }
    let out = pc_word(1u) / 4u;
    atomicAdd(&counters[out], bad);
    atomicAdd(&counters[out + 1u], sum);
}
