// Shared by the drivers' built-in add_f32 and mul_f32: build.rs appends this file to each.
// The kernel gives `combine(a, b) -> f32`, one IEEE operation (so exact wherever the
// device keeps IEEE semantics); `out[i] = combine(a[i], b[i])` for the whole elements
// bound as out, each workgroup over its share.

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let share = share_of(words_bound(arrayLength(&out), 2u), id, count);
    let items = share.end - share.start;
    let at_a = base_word(0u) + share.start;
    let at_b = base_word(1u) + share.start;
    let at_out = base_word(2u) + share.start;
    var j = lane;
    loop {
        if j >= items {
            break;
        }
        out[at_out + j] = combine(a[at_a + j], b[at_b + j]);
        if items - j <= 64u {
            break;
        }
        j += 64u;
    }
}
