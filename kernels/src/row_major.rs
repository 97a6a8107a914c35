//! Walking the rows of a row-major array: the index of every row (all dimensions but the
//! last), in memory order. The layout kernels (PAD, STRIDED_SLICE, TRANSPOSE) and
//! broadcasting walk their outputs so, one row at a time.

/// Calls `f(index)` for each index over the first `outer` dimensions of `dims`, in
/// row-major order (`index[outer - 1]` fastest); `index[outer..]` stays 0. `outer` may be 0
/// (one call, all zeros); a zero among `dims[..outer]` means no call.
#[inline(always)]
pub(crate) fn for_each_row<const N: usize>(
    dims: &[usize; N],
    outer: usize,
    mut f: impl FnMut(&[usize; N]),
) {
    let rows: usize = dims[..outer].iter().product();
    let mut index = [0usize; N];
    for _ in 0..rows {
        f(&index);
        for d in (0..outer).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
}
