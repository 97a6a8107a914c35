// Shared by the drivers' built-in add_f32 and mul_f32: build.rs appends this file to each.
// The kernel gives `combine(a, b) -> f32`, one IEEE operation (so exact wherever the
// device keeps IEEE semantics); `zip_f32` sets `out[i] = combine(a[i], b[i])` for the whole
// elements bound as out, each workgroup over its share. The bindings are pair_f32.wgsl's.

fn zip_f32(id: vec3<u32>, count: vec3<u32>, lane: u32) {
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
