//! Buffers as the caller sees them: handles, spans (subspans) and what a buffer allows.

use crate::handle::{Handle, Kind};
use crate::memory::{BufferUsage, MemoryAccess, MemoryType};
use crate::Error;

/// Marker for buffer handles.
pub enum BufferKind {}
impl Kind for BufferKind {
    const NAME: &'static str = "buffer";
}

/// A buffer: one logical range of device memory, possibly backed by several chunks.
pub type Buffer = Handle<BufferKind>;

/// What a buffer is: its size, its memory, and what it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferInfo {
    /// Size in bytes.
    pub size: u64,
    /// The memory it lives in.
    pub memory_type: MemoryType,
    /// The usages it was made with.
    pub usage: BufferUsage,
    /// The access it allows.
    pub access: MemoryAccess,
    /// Bytes per chunk: equal to `size` for a buffer in one allocation.
    pub chunk_size: u64,
    /// Whether it wraps host memory the caller imported (no copy was made).
    pub imported: bool,
}

impl BufferInfo {
    /// How many chunks back the buffer.
    pub const fn chunk_count(&self) -> u64 {
        if self.chunk_size == 0 {
            1
        } else {
            self.size.div_ceil(self.chunk_size)
        }
    }

    /// Checks `needed` usage for `what`.
    pub fn require_usage(&self, what: &'static str, needed: BufferUsage) -> Result<(), Error> {
        if self.usage.contains(needed) {
            Ok(())
        } else {
            Err(Error::Usage {
                what,
                needed: needed.bits(),
                allowed: self.usage.bits(),
            })
        }
    }

    /// Checks that a dispatch may bind this buffer; returns whether the kernel may write it
    /// (the buffer is writable and allowed storage writes), else it binds read-only.
    #[inline]
    pub fn check_dispatch_binding(&self) -> Result<bool, Error> {
        self.require_usage("dispatch binding", BufferUsage::DISPATCH_STORAGE_READ)?;
        Ok(self.access.contains(MemoryAccess::WRITE)
            && self.usage.contains(BufferUsage::DISPATCH_STORAGE_WRITE))
    }

    /// Checks that a dispatch may read its workgroup count from this buffer.
    #[inline]
    pub fn check_indirect_params(&self) -> Result<(), Error> {
        self.require_usage(
            "indirect dispatch parameters",
            BufferUsage::DISPATCH_INDIRECT_PARAMS,
        )
    }

    /// Checks `needed` access.
    pub fn require_access(&self, needed: MemoryAccess) -> Result<(), Error> {
        if self.access.contains(needed) {
            Ok(())
        } else {
            Err(Error::Access {
                needed: needed.bits(),
                allowed: self.access.bits(),
            })
        }
    }

    /// `offset..offset + length` resolved against the buffer: `length` of [`WHOLE`] means
    /// "to the end". Errors when the range leaves the buffer.
    pub fn resolve(&self, what: &'static str, offset: u64, length: u64) -> Result<u64, Error> {
        let length = if length == WHOLE {
            self.size.saturating_sub(offset)
        } else {
            length
        };
        match offset.checked_add(length) {
            Some(end) if end <= self.size && offset <= self.size => Ok(length),
            _ => Err(Error::OutOfRange {
                what,
                offset,
                length,
                size: self.size,
            }),
        }
    }

    /// Checks a mapping with `access` for a use in `usage` (any of its bits): host-visible
    /// memory, a mapping usage, and the access rights.
    pub fn check_mapping(&self, access: MemoryAccess, usage: BufferUsage) -> Result<(), Error> {
        if !self.memory_type.is_mappable() {
            return Err(Error::NotMappable);
        }
        if !self.usage.intersects(usage) {
            return Err(Error::Usage {
                what: "map",
                needed: usage.bits(),
                allowed: self.usage.bits(),
            });
        }
        self.require_access(access)
    }

    /// Checks a host read (`access` READ) or write (WRITE) of `offset..offset + length`
    /// moving `len` bytes: the access right, the range, and a host slice of the same length.
    pub fn check_host_transfer(
        &self,
        offset: u64,
        length: u64,
        access: MemoryAccess,
        len: usize,
    ) -> Result<(), Error> {
        self.require_access(access)?;
        let what = if access.contains(MemoryAccess::WRITE) {
            "write"
        } else {
            "read"
        };
        if self.resolve(what, offset, length)? != len as u64 {
            return Err(Error::InvalidArgument(
                "host transfer length differs from the span's",
            ));
        }
        Ok(())
    }

    /// Checks the target range of a streaming read from a source of `source_len` bytes in
    /// chunks of `chunk_bytes`; returns the bytes to move.
    pub fn check_stream_target(
        &self,
        offset: u64,
        length: u64,
        source_len: u64,
        chunk_bytes: u64,
    ) -> Result<u64, Error> {
        if chunk_bytes == 0 {
            return Err(Error::InvalidArgument("streaming chunk size of zero"));
        }
        self.require_access(MemoryAccess::WRITE)?;
        self.require_usage("streaming read", BufferUsage::TRANSFER_TARGET)?;
        let length = self.resolve("streaming read", offset, length)?;
        if source_len < length {
            return Err(Error::OutOfRange {
                what: "streaming read source",
                offset: 0,
                length,
                size: source_len,
            });
        }
        Ok(length)
    }
}

/// A length meaning "from the offset to the end of the buffer".
pub const WHOLE: u64 = u64::MAX;

/// A subspan of a buffer: `length` bytes at `offset`. A plain value; every use checks it
/// against the buffer, so a span of a released buffer is refused like its handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferSpan {
    /// The buffer.
    pub buffer: Buffer,
    /// Start, in bytes from the buffer's start.
    pub offset: u64,
    /// Length in bytes ([`WHOLE`] = to the end).
    pub length: u64,
}

impl BufferSpan {
    /// The whole buffer.
    pub const fn whole(buffer: Buffer) -> Self {
        Self {
            buffer,
            offset: 0,
            length: WHOLE,
        }
    }

    /// `length` bytes at `offset`.
    pub const fn new(buffer: Buffer, offset: u64, length: u64) -> Self {
        Self {
            buffer,
            offset,
            length,
        }
    }

    /// A subspan of this span, relative to its start; checked against this span's length
    /// (when known) so a subspan never grows its parent.
    pub fn subspan(self, offset: u64, length: u64) -> Result<Self, Error> {
        let start = self.offset.checked_add(offset);
        let fits = match (start, self.length) {
            (None, _) => false,
            (Some(_), WHOLE) => true,
            (Some(_), parent) => offset <= parent && (length == WHOLE || length <= parent - offset),
        };
        let (Some(start), true) = (start, fits) else {
            return Err(Error::OutOfRange {
                what: "subspan",
                offset,
                length,
                size: self.length,
            });
        };
        let length = match (length, self.length) {
            (WHOLE, WHOLE) => WHOLE,
            (WHOLE, parent) => parent - offset,
            (l, _) => l,
        };
        Ok(Self::new(self.buffer, start, length))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(size: u64) -> BufferInfo {
        BufferInfo {
            size,
            memory_type: MemoryType::DEVICE_LOCAL,
            usage: BufferUsage::TRANSFER,
            access: MemoryAccess::READ,
            chunk_size: size,
            imported: false,
        }
    }

    #[test]
    fn ranges_are_resolved_and_checked() {
        let i = info(100);
        assert_eq!(i.resolve("x", 10, WHOLE), Ok(90));
        assert_eq!(i.resolve("x", 100, 0), Ok(0));
        assert!(i.resolve("x", 101, WHOLE).is_err());
        assert!(i.resolve("x", 90, 11).is_err());
        assert!(i.resolve("x", u64::MAX, 2).is_err());
        assert!(i
            .require_usage("dispatch", BufferUsage::DISPATCH_STORAGE)
            .is_err());
        assert!(i.require_access(MemoryAccess::WRITE).is_err());
        assert!(i.require_access(MemoryAccess::READ).is_ok());
    }

    #[test]
    fn subspans_never_grow_their_parent() {
        let b = Buffer::from_parts(0, 0);
        let s = BufferSpan::new(b, 16, 64);
        assert_eq!(s.subspan(8, 8), Ok(BufferSpan::new(b, 24, 8)));
        assert_eq!(s.subspan(8, WHOLE), Ok(BufferSpan::new(b, 24, 56)));
        assert!(s.subspan(60, 8).is_err());
        assert!(s.subspan(65, WHOLE).is_err());
        assert_eq!(
            BufferSpan::whole(b).subspan(4, WHOLE),
            Ok(BufferSpan::new(b, 4, WHOLE))
        );
        assert!(BufferSpan::new(b, u64::MAX - 1, WHOLE)
            .subspan(4, 1)
            .is_err());
    }
}
