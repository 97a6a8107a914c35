//! The crate-wide error type.

use crate::memory::alloc::AllocError;
use crate::memory::ParamsError;
use core::fmt;

/// Every error the HAL returns. Bad input is always answered with one of these, never a
/// panic; each variant carries enough context to act on, and the device keeps working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// A device-memory allocator refused a request.
    #[error("allocator: {0}")]
    Alloc(#[from] AllocError),
    /// Buffer parameters do not fit a memory heap.
    #[error("buffer parameters: {0}")]
    Params(#[from] ParamsError),
    /// A fixed-capacity table is full.
    #[error("the {table} table is full ({capacity} entries)")]
    TableFull {
        /// Which table.
        table: &'static str,
        /// Its capacity.
        capacity: u32,
    },
    /// A handle whose object was released (or that never named one).
    #[error("stale or invalid {kind} handle (slot {index})")]
    StaleHandle {
        /// The kind of object.
        kind: &'static str,
        /// The slot it named.
        index: u32,
    },
    /// A range outside the buffer (or binding, or host data) it refers to.
    #[error("{what}: range {offset}+{length} outside 0..{size}")]
    OutOfRange {
        /// What was being accessed.
        what: &'static str,
        /// Start of the range.
        offset: u64,
        /// Its length.
        length: u64,
        /// Size of what it refers to.
        size: u64,
    },
    /// A buffer used in a way its usage does not allow.
    #[error("{what} needs usage {needed:#x}, buffer allows {allowed:#x}")]
    Usage {
        /// The operation.
        what: &'static str,
        /// The [`BufferUsage`](crate::memory::BufferUsage) bits it needs.
        needed: u32,
        /// The bits the buffer was made with.
        allowed: u32,
    },
    /// A read or write the buffer's access rights do not allow.
    #[error("access {needed:#x} not allowed (buffer allows {allowed:#x})")]
    Access {
        /// The [`MemoryAccess`](crate::memory::MemoryAccess) bits asked for.
        needed: u16,
        /// The bits the buffer allows.
        allowed: u16,
    },
    /// Mapping memory the host cannot see.
    #[error("buffer is not host-visible and cannot be mapped")]
    NotMappable,
    /// A mapping or binding that would span two chunks of a chunked buffer.
    #[error("range {offset}+{length} crosses a chunk boundary (chunk size {chunk_size})")]
    CrossesChunks {
        /// Start of the range.
        offset: u64,
        /// Its length.
        length: u64,
        /// The buffer's chunk size.
        chunk_size: u64,
    },
    /// No kernel or executable by that name is linked in.
    #[error("unknown kernel `{name}`")]
    UnknownKernel {
        /// The name asked for (truncated to 32 bytes).
        name: ShortName,
    },
    /// A semaphore signalled with a value not above its current one.
    #[error("semaphore signalled backwards: {requested} is not above {current}")]
    SemaphoreBackwards {
        /// Its current value.
        current: u64,
        /// The value asked for.
        requested: u64,
    },
    /// A semaphore (or one a waited operation depended on) failed.
    #[error("semaphore failed with status {code}")]
    SemaphoreFailed {
        /// The status code the failure carried.
        code: u32,
    },
    /// A wait that nothing can ever satisfy (on the inline driver: no queued work will signal
    /// the value and no other thread exists to do it).
    #[error("wait for value {value} can never be satisfied (semaphore is at {current})")]
    WaitNeverSatisfied {
        /// The value waited for.
        value: u64,
        /// The semaphore's value.
        current: u64,
    },
    /// A wait with a deadline that passed.
    #[error("wait timed out")]
    Timeout,
    /// A command buffer used in the wrong state (recording after end, submitting before it).
    #[error("command buffer: {0}")]
    CommandBufferState(&'static str),
    /// A fixed limit exceeded: commands in a buffer, bindings or constants of a dispatch, …
    #[error("{what}: {requested} exceeds the limit of {limit}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// What was asked for.
        requested: u64,
        /// The limit.
        limit: u64,
    },
    /// A binding-table slot not bound at submit, or past the table's capacity.
    #[error("binding slot {slot} not available (table has {bound})")]
    BindingSlot {
        /// The slot.
        slot: u32,
        /// Entries bound (or the capacity).
        bound: u32,
    },
    /// An argument that makes no sense on its own.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// Something this driver does not do.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// A failure inside the driver or a kernel, with the driver's own code.
    #[error("{what} (code {code})")]
    Driver {
        /// What failed.
        what: &'static str,
        /// The driver's code (a `VkResult`, a kernel's error number).
        code: i64,
    },
}

/// A name kept in an error without a heap: the first 32 bytes of it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShortName {
    bytes: [u8; 32],
    len: u8,
}

impl ShortName {
    /// The first 32 bytes of `name` (cut at a character boundary).
    pub fn new(name: &str) -> Self {
        let mut len = name.len().min(32);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; 32];
        bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
        Self {
            bytes,
            len: len as u8,
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("?")
    }
}

impl fmt::Debug for ShortName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for ShortName {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{=str}", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_cut_at_char_boundaries() {
        assert_eq!(ShortName::new("matmul_f32").as_str(), "matmul_f32");
        let long = "é".repeat(20);
        assert_eq!(ShortName::new(&long).as_str(), "é".repeat(16));
    }
}
