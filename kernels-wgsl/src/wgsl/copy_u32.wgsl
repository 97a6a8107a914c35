// copy_u32: the first words of binding 0, as many as binding 1 holds whole, into binding 1,
// bit for bit.

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let share = share_of(words_bound(arrayLength(&dst), 1u), id, count);
    let items = share.end - share.start;
    let src_at = base_word(0u) + share.start;
    let dst_at = base_word(1u) + share.start;
    var j = lane;
    loop {
        if j >= items {
            break;
        }
        dst[dst_at + j] = src[src_at + j];
        if items - j <= 64u {
            break;
        }
        j += 64u;
    }
}
