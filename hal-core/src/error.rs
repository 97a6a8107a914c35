//! The crate-wide error type.

use crate::memory::alloc::AllocError;
use crate::memory::ParamsError;

/// Every error the HAL core returns. Bad input is always answered with one of these, never a
/// panic; each variant carries enough context to act on.
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
}
