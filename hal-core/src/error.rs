//! The crate-wide error type.

use crate::kernel::KernelError;
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
    /// A kernel refused a dispatch: its bindings, push constants or shape.
    #[error("kernel: {0}")]
    Kernel(#[from] KernelError),
    /// The backend API failed.
    #[error("{what} failed with backend result {result}")]
    Backend {
        /// What was called.
        what: &'static str,
        /// The backend's result code (a `VkResult`).
        result: i32,
    },
    /// An invariant of the runtime broke: a bug in Ember, never a consequence of input.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// The status a failure propagates with through semaphores: the error's kind, numbered as
/// IREE (and absl) number status codes. [`Error::status_code`] maps every error to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum StatusCode {
    /// The operation was cancelled.
    Cancelled = 1,
    /// An error with no better kind.
    Unknown = 2,
    /// Bad input: an argument, a handle, a binding that makes no sense.
    InvalidArgument = 3,
    /// A deadline passed.
    DeadlineExceeded = 4,
    /// Something named does not exist (a kernel).
    NotFound = 5,
    /// A buffer's usage or access rights do not allow the operation.
    PermissionDenied = 7,
    /// Out of memory, table entries or another fixed capacity.
    ResourceExhausted = 8,
    /// The object is not in a state that allows the operation.
    FailedPrecondition = 9,
    /// The operation was abandoned (a wait that can never be satisfied).
    Aborted = 10,
    /// A range outside what it refers to.
    OutOfRange = 11,
    /// Something this driver does not do.
    Unimplemented = 12,
    /// An invariant of the runtime broke.
    Internal = 13,
    /// The device (or its backend API) failed.
    Unavailable = 14,
}

impl Error {
    /// The status this error propagates with when it fails a semaphore: a semaphore's own
    /// failure code as it was, otherwise the [`StatusCode`] of the error's kind.
    pub const fn status_code(&self) -> u32 {
        let status = match self {
            Error::SemaphoreFailed { code } => return *code,
            Error::Alloc(_) | Error::TableFull { .. } | Error::Limit { .. } => {
                StatusCode::ResourceExhausted
            }
            Error::Params(_)
            | Error::StaleHandle { .. }
            | Error::BindingSlot { .. }
            | Error::InvalidArgument(_)
            | Error::Kernel(_) => StatusCode::InvalidArgument,
            Error::OutOfRange { .. } | Error::CrossesChunks { .. } => StatusCode::OutOfRange,
            Error::Usage { .. } | Error::Access { .. } => StatusCode::PermissionDenied,
            Error::NotMappable
            | Error::SemaphoreBackwards { .. }
            | Error::CommandBufferState(_) => StatusCode::FailedPrecondition,
            Error::UnknownKernel { .. } => StatusCode::NotFound,
            Error::WaitNeverSatisfied { .. } => StatusCode::Aborted,
            Error::Timeout => StatusCode::DeadlineExceeded,
            Error::Unsupported(_) => StatusCode::Unimplemented,
            Error::Backend { .. } => StatusCode::Unavailable,
            Error::Internal(_) => StatusCode::Internal,
        };
        status as u32
    }
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

    #[test]
    fn status_codes_follow_the_kind() {
        assert_eq!(Error::SemaphoreFailed { code: 42 }.status_code(), 42);
        assert_eq!(Error::InvalidArgument("x").status_code(), 3);
        assert_eq!(Error::Timeout.status_code(), 4);
        let oob = Error::OutOfRange {
            what: "x",
            offset: 0,
            length: 1,
            size: 0,
        };
        assert_eq!(oob.status_code(), StatusCode::OutOfRange as u32);
        let full = Error::TableFull {
            table: "x",
            capacity: 1,
        };
        assert_eq!(full.status_code(), StatusCode::ResourceExhausted as u32);
    }
}
