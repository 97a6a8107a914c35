//! Scoped mappings of the local device's memory.

use crate::memory::RawSpan;
use hal_core::device::Mapped;
use hal_core::memory::MemoryAccess;
use hal_core::Error;

pub(crate) fn read_only() -> Error {
    Error::Access {
        needed: MemoryAccess::WRITE.bits(),
        allowed: MemoryAccess::READ.bits(),
    }
}

/// A scoped mapping of local memory.
pub struct LocalMapping<'a> {
    bytes: MappedBytes<'a>,
}

enum MappedBytes<'a> {
    Read(&'a [u8]),
    Write(&'a mut [u8]),
}

impl<'a> LocalMapping<'a> {
    ///
    /// # Safety
    /// `'a` is a `&mut` borrow of the device that made `raw` (so no other view exists).
    pub(crate) unsafe fn new(raw: RawSpan, access: MemoryAccess) -> Self {
        // SAFETY: the caller's `&mut` borrow of the device for 'a makes this the only view.
        let bytes = match unsafe { raw.bytes_mut() } {
            Some(b) if access.contains(MemoryAccess::WRITE) => MappedBytes::Write(b),
            // SAFETY: as above (a read-only view instead).
            _ => MappedBytes::Read(unsafe { raw.bytes() }),
        };
        Self { bytes }
    }
}

impl Mapped for LocalMapping<'_> {
    fn bytes(&self) -> &[u8] {
        match &self.bytes {
            MappedBytes::Read(b) => b,
            MappedBytes::Write(b) => b,
        }
    }

    fn bytes_mut(&mut self) -> Result<&mut [u8], Error> {
        match &mut self.bytes {
            MappedBytes::Write(b) => Ok(b),
            MappedBytes::Read(_) => Err(Error::Access {
                needed: MemoryAccess::WRITE.bits(),
                allowed: MemoryAccess::READ.bits(),
            }),
        }
    }
}
