// Shared by the int8 kernels whose invocations can share an output word (build.rs's
// `SPLIT_WORDS`): build.rs appends it after each one's own source. Each kernel gives
// `word_partial` (one invocation's share of a word's four sums), `finish_element` (an output
// from its whole sum) and an `output` binding of words; kernels that take the bytes of a
// word one at a time give `partial_sum` (one invocation's share of one output's sum) and
// use `bytes_partial`.

// Invocation `sub` of `per_word`'s shares of the output bytes of word `w` one at a time
// (`partial_sum`); bytes outside the output `start..start + n` add nothing.
fn bytes_partial(w: u32, start: u32, n: u32, sub: u32, per_word: u32) -> vec4<i32> {
    var acc = vec4<i32>(0);
    for (var l = 0u; l < 4u; l++) {
        let b = w * 4u + l;
        if b >= start && b < start + n {
            acc[l] = partial_sum(b - start, sub, per_word);
        }
    }
    return acc;
}

var<workgroup> partial: array<vec4<i32>, 64>;

// The split path over the output bytes `start..start + n`: `per_word` invocations (a power of
// two up to 64) share each output word, a workgroup taking 64 / `per_word` consecutive words a
// round. Each adds its share of the word's four sums (`word_partial`); the word's first
// invocation adds the shares in workgroup memory and writes the word (`finish_element` of
// each output byte), keeping its bytes outside the output. Wrapping i32 sums, so the order
// of the terms does not matter.
fn split_words(id: vec3<u32>, count: vec3<u32>, lane: u32, per_word: u32, start: u32, n: u32) {
    let words = words_of(start, n);
    let group = id.x + count.x * (id.y + count.y * id.z);
    let groups = count.x * count.y * count.z;
    let per_group = 64u / per_word;
    let sub = lane % per_word;
    // Every invocation of the workgroup takes the same rounds (it meets the barriers).
    for (var first = words.first + group * per_group; first <= words.last; first += groups * per_group) {
        let w = first + lane / per_word;
        var acc = vec4<i32>(0);
        if w <= words.last {
            acc = word_partial(w, start, n, sub, per_word);
        }
        partial[lane] = acc;
        workgroupBarrier();
        for (var half = per_word / 2u; half > 0u; half /= 2u) {
            if sub < half {
                partial[lane] += partial[lane + half];
            }
            workgroupBarrier();
        }
        if sub == 0u && w <= words.last {
            let sum = partial[lane];
            var word = output[w];
            for (var l = 0u; l < 4u; l++) {
                let b = w * 4u + l;
                if b >= start && b < start + n {
                    word = with_byte(word, l, finish_element(b - start, sum[l]));
                }
            }
            output[w] = word;
        }
        workgroupBarrier();
    }
}
