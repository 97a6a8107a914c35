// fill_u32: every whole word of binding 0 = constant 0, bit for bit.

@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let value = param(0u);
    let share = share_of(words_bound(arrayLength(&out), 0u), id, count);
    let items = share.end - share.start;
    let base = base_word(0u) + share.start;
    var j = lane;
    loop {
        if j >= items {
            break;
        }
        out[base + j] = value;
        if items - j <= 64u {
            break;
        }
        j += 64u;
    }
}
