// relu_f32: out[i] = max(in[i], 0) for the whole elements bound as out, on the bits (see
// `relu_bits`), so subnormals and NaN payloads come out exactly as hal-local's.

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(num_workgroups) count: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let share = share_of(words_bound(arrayLength(&out), 1u), id, count);
    let items = share.end - share.start;
    let src_at = base_word(0u) + share.start;
    let dst_at = base_word(1u) + share.start;
    var j = lane;
    loop {
        if j >= items {
            break;
        }
        out[dst_at + j] = relu_bits(src[src_at + j]);
        if items - j <= 64u {
            break;
        }
        j += 64u;
    }
}
