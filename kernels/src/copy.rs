//! Element copies for the byte-generic movement kernels.

/// Copies element `i` of `src` to element `o` of `dst`, elements of `E` bytes.
#[inline(always)]
pub(crate) fn copy_elem<const E: usize>(dst: &mut [u8], o: usize, src: &[u8], i: usize) {
    dst[o * E..o * E + E].copy_from_slice(&src[i * E..i * E + E]);
}

/// Dispatches `$body` with the const `$e` bound to 1, 2 or 4 (`$bytes`; anything else
/// runs as 4, which decode never lets through).
macro_rules! with_elem_bytes {
    ($bytes:expr, $e:ident => $body:expr) => {
        match $bytes {
            1 => {
                const $e: usize = 1;
                $body
            }
            2 => {
                const $e: usize = 2;
                $body
            }
            _ => {
                const $e: usize = 4;
                $body
            }
        }
    };
}
pub(crate) use with_elem_bytes;
