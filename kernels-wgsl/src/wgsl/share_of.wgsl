// Splitting work over the dispatch's workgroups as hal-local does, for the kernels that run
// on the dispatch's own grid (the built-in kernels; their results do not depend on it).

const U32_MAX: u32 = 0xffffffffu;

fn sat_add(a: u32, b: u32) -> u32 {
    let s = a + b;
    return select(s, U32_MAX, s < a);
}

fn sat_mul(a: u32, b: u32) -> u32 {
    if a != 0u && b > U32_MAX / a {
        return U32_MAX;
    }
    return a * b;
}

// A half-open range of work items.
struct Span {
    start: u32,
    end: u32,
}

// hal-local's `Workgroup::share_of(n)`: the workgroup's contiguous slice of `0..n` when `n`
// items are split evenly over every workgroup of the grid in linear order (x fastest).
// hal-local computes in u64; here every product and sum saturates at 2^32 - 1, which gives
// the same slice: a saturated index or total is at least `n`, so the slice is clamped to
// `n` exactly as the u64 value would be.
fn share_of(n: u32, id: vec3<u32>, count: vec3<u32>) -> Span {
    let index = sat_add(id.x, sat_mul(count.x, sat_add(id.y, sat_mul(count.y, id.z))));
    let total = max(sat_mul(sat_mul(count.x, count.y), count.z), 1u);
    let whole = n / total;
    let rest = n % total;
    let per = whole + select(0u, 1u, rest != 0u);
    let start = min(sat_mul(index, per), n);
    return Span(start, start + min(per, n - start));
}
