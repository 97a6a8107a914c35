//! Executables: the kernels a dispatch runs.

use crate::handle::{Handle, Kind};

/// Marker for executable handles.
pub enum ExecutableKind {}
impl Kind for ExecutableKind {
    const NAME: &'static str = "executable";
}

/// A loaded executable (one entry point), ready to dispatch.
pub type Executable = Handle<ExecutableKind>;

/// What an executable is made from. Each driver loads the forms it understands and refuses
/// the others with [`Error::Unsupported`](crate::Error::Unsupported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutableSource<'a> {
    /// A kernel linked into the program, by name (the local driver's static table).
    Kernel(&'a str),
    /// A SPIR-V module and its entry point (the Vulkan driver).
    Spirv {
        /// The module's words.
        code: &'a [u32],
        /// The entry point's name.
        entry: &'a str,
    },
}
