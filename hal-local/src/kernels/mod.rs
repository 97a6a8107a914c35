//! Built-in kernels (placeholder until the kernel library lands).
use crate::kernel::{Kernel, KernelError, Workgroup};

fn noop(_: &Workgroup<'_>) -> Result<(), KernelError> {
    Ok(())
}

/// The built-in kernels.
pub static BUILTIN: &[Kernel] = &[Kernel {
    name: "noop",
    entry: noop,
}];

/// The kernel named `name` in `table`.
pub fn find<'t>(table: &'t [Kernel], name: &str) -> Option<&'t Kernel> {
    table.iter().find(|k| k.name == name)
}
