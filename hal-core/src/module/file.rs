//! Writing a module file (host tools; needs `alloc`).

use super::format::{pool_offset, Header, MAGIC, PREAMBLE_BYTES, VERSION};
use alloc::vec::Vec;

/// The file for `header` and `pool`: preamble, header, zero padding to a 64-byte boundary,
/// pool. `header.pool_len` must be `pool.len()`.
pub fn write(header: &Header<'_>, pool: &[u8]) -> Result<Vec<u8>, postcard::Error> {
    let encoded = postcard::to_allocvec(header)?;
    let header_len =
        u32::try_from(encoded.len()).map_err(|_| postcard::Error::SerializeBufferFull)?;
    let pool_at = pool_offset(header_len.into()) as usize;
    let mut out = Vec::with_capacity(pool_at + pool.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&header_len.to_le_bytes());
    debug_assert_eq!(out.len(), PREAMBLE_BYTES);
    out.extend_from_slice(&encoded);
    out.resize(pool_at, 0);
    out.extend_from_slice(pool);
    Ok(out)
}
