//! Memory connections between devices, and copies that take the path they give.
//!
//! Each (device, memory type) pair lives in a [`MemoryDomain`]. Two pairs are
//! [`MemoryConnection::Unified`] when both are host memory (each side can use the other's
//! bytes directly), [`MemoryConnection::Migratable`] when they sit on the same fabric (one
//! driver can move bytes into the other's memory without a host bounce), and
//! [`MemoryConnection::None`] otherwise: bytes go through a host staging buffer.

use crate::buffer::BufferSpan;
use crate::chunk::ChunkLayout;
use crate::device::{Device, Mapped};
use crate::memory::{BufferUsage, MemoryAccess, MemoryDomain};
use crate::Error;

/// How two (device, memory) pairs reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MemoryConnection {
    /// Usable directly by both sides: a copy is one `memcpy`, an import is free.
    Unified,
    /// A driver can copy between them without a host bounce buffer.
    Migratable,
    /// Bytes must go through host staging.
    None,
}

impl MemoryConnection {
    /// The connection between two domains.
    pub const fn between(a: MemoryDomain, b: MemoryDomain) -> Self {
        match (a, b) {
            (MemoryDomain::Host, MemoryDomain::Host) => Self::Unified,
            (MemoryDomain::Device { fabric: x }, MemoryDomain::Device { fabric: y }) if x == y => {
                Self::Migratable
            }
            (MemoryDomain::Host, MemoryDomain::Device { .. })
            | (MemoryDomain::Device { .. }, MemoryDomain::Host) => Self::Migratable,
            _ => Self::None,
        }
    }
}

/// The connection between `source`'s memory and `target`'s memory.
pub fn connection<A: Device, B: Device>(
    a: &A,
    source: BufferSpan,
    b: &B,
    target: BufferSpan,
) -> Result<MemoryConnection, Error> {
    let sa = a.memory_domain(a.buffer_info(source.buffer)?.memory_type);
    let sb = b.memory_domain(b.buffer_info(target.buffer)?.memory_type);
    Ok(MemoryConnection::between(sa, sb))
}

/// Copies `length` bytes from `source` on device `a` to `target` on device `b` by the path
/// their connection gives, and returns that connection:
/// - `Unified`: both ranges mapped, one copy, no staging;
/// - `Migratable`: the side that can be mapped is, and the other driver moves the bytes
///   straight into (or out of) that mapping — one copy, no staging;
/// - `None`, or no side mappable: through `staging` in pieces of at most `staging.len()`.
///
/// Host-synchronous: complete when it returns. It waits for no queue work, so order it after
/// whatever writes `source`. `length` may be [`WHOLE`](crate::WHOLE) (the rest of `source`);
/// each span's own length, when given, bounds the copy.
pub fn copy_between<A: Device, B: Device>(
    a: &mut A,
    source: BufferSpan,
    b: &mut B,
    target: BufferSpan,
    length: u64,
    staging: &mut [u8],
) -> Result<MemoryConnection, Error> {
    let info_a = a.buffer_info(source.buffer)?;
    let info_b = b.buffer_info(target.buffer)?;
    let source_len = info_a.resolve("copy source", source.offset, source.length)?;
    let length = if length == crate::WHOLE {
        source_len
    } else {
        length
    };
    let oob = |what, span: BufferSpan, size| Error::OutOfRange {
        what,
        offset: span.offset,
        length,
        size,
    };
    if length > source_len {
        return Err(oob("copy source", source, source_len));
    }
    let target_len = info_b.resolve("copy target", target.offset, target.length)?;
    if length > target_len {
        return Err(oob("copy target", target, target_len));
    }
    let path = connection(a, source, b, target)?;
    let mappable = |info: &crate::BufferInfo, access| {
        info.memory_type.is_mappable()
            && info.usage.intersects(BufferUsage::MAPPING)
            && info.access.contains(access)
    };
    let a_maps = mappable(&info_a, MemoryAccess::READ);
    let b_maps = mappable(&info_b, MemoryAccess::WRITE);
    let chunk_a = ChunkLayout::of(info_a.size, info_a.chunk_size).chunk_size();
    let chunk_b = ChunkLayout::of(info_b.size, info_b.chunk_size).chunk_size();
    let mut done = 0;
    while done < length {
        // Pieces that stay inside one chunk on both sides, so every mapping is legal.
        let n = (length - done)
            .min(chunk_a - (source.offset + done) % chunk_a)
            .min(chunk_b - (target.offset + done) % chunk_b);
        let from = BufferSpan::new(source.buffer, source.offset + done, n);
        let to = BufferSpan::new(target.buffer, target.offset + done, n);
        match path {
            MemoryConnection::Unified if a_maps && b_maps => {
                let src = a.map(from, MemoryAccess::READ)?;
                let mut dst = b.map(to, MemoryAccess::WRITE)?;
                dst.bytes_mut()?.copy_from_slice(src.bytes());
            }
            MemoryConnection::Unified | MemoryConnection::Migratable if b_maps => {
                let mut dst = b.map(to, MemoryAccess::WRITE)?;
                a.read_buffer(from, dst.bytes_mut()?)?;
            }
            MemoryConnection::Unified | MemoryConnection::Migratable if a_maps => {
                let src = a.map(from, MemoryAccess::READ)?;
                b.write_buffer(to, src.bytes())?;
            }
            _ => staged(a, from, b, to, staging)?,
        }
        done += n;
    }
    Ok(path)
}

fn staged<A: Device, B: Device>(
    a: &mut A,
    source: BufferSpan,
    b: &mut B,
    target: BufferSpan,
    staging: &mut [u8],
) -> Result<(), Error> {
    if staging.is_empty() {
        return Err(Error::InvalidArgument("staging buffer is empty"));
    }
    let mut done = 0;
    while done < source.length {
        let n = (staging.len() as u64).min(source.length - done);
        let chunk = &mut staging[..n as usize];
        a.read_buffer(
            BufferSpan::new(source.buffer, source.offset + done, n),
            chunk,
        )?;
        b.write_buffer(
            BufferSpan::new(target.buffer, target.offset + done, n),
            chunk,
        )?;
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_follow_domains() {
        use MemoryDomain::*;
        assert_eq!(
            MemoryConnection::between(Host, Host),
            MemoryConnection::Unified
        );
        let gpu = Device { fabric: 1 };
        assert_eq!(
            MemoryConnection::between(gpu, gpu),
            MemoryConnection::Migratable
        );
        assert_eq!(
            MemoryConnection::between(Host, gpu),
            MemoryConnection::Migratable
        );
        assert_eq!(
            MemoryConnection::between(gpu, Device { fabric: 2 }),
            MemoryConnection::None
        );
    }
}
