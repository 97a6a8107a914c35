//! What a kernel refuses: the errors every driver's dispatch reports the same way.
//!
//! A kernel checks its bindings and push constants before it touches memory; a dispatch it
//! refuses fails with [`Error::Kernel`](crate::Error::Kernel), and so does every semaphore its
//! submission would have signalled. A kernel's checks are its contract
//! ([`contract`](crate::contract), declared with the kernel in `ember-kernels`): the local
//! driver's kernels run them, and since a GPU kernel cannot report an error, the Vulkan
//! driver runs the same ones on the host before recording.

/// Why a kernel refused a workgroup. The dispatch fails and so does every semaphore its
/// submission would have signalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum KernelError {
    /// Fewer bindings than the kernel reads.
    #[error("kernel needs binding {index}, dispatch bound {bound}")]
    MissingBinding {
        /// The binding asked for.
        index: u32,
        /// How many the dispatch bound.
        bound: u32,
    },
    /// Fewer push constants than the kernel reads.
    #[error("kernel needs {needed} push constants, dispatch gave {given}")]
    MissingConstants {
        /// How many the kernel reads.
        needed: u32,
        /// How many the dispatch gave.
        given: u32,
    },
    /// A binding too short for the shape the constants describe.
    #[error("binding {index} holds {len} bytes, kernel needs {needed}")]
    BindingTooSmall {
        /// The binding.
        index: u32,
        /// Its length in bytes.
        len: u64,
        /// Bytes the kernel needs.
        needed: u64,
    },
    /// A binding whose offset or length does not fit the element type.
    #[error("binding {index} is not aligned to {alignment} bytes")]
    Misaligned {
        /// The binding.
        index: u32,
        /// The alignment the element type needs.
        alignment: u32,
    },
    /// A binding the kernel writes but the buffer is read-only (imported constants).
    #[error("binding {index} is read-only")]
    ReadOnly {
        /// The binding.
        index: u32,
    },
    /// Constants that describe an impossible shape (zero, or overflowing).
    #[error("invalid shape: {0}")]
    Shape(&'static str),
}
