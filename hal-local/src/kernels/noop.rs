//! `noop`: a kernel that does nothing, to measure dispatch overhead.

use crate::kernel::{Entry, Kernel, KernelError, Workgroup};

/// The `noop` table entry.
pub const NOOP: Kernel = Kernel {
    name: "noop",
    entry: Entry::Shared(noop),
};

/// Does nothing and succeeds, whatever the constants and bindings.
///
/// # Errors
///
/// None.
pub fn noop(_wg: &Workgroup<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::testutil::{grids, run};

    #[test]
    fn succeeds_on_every_grid() {
        for &grid in grids() {
            assert_eq!(run(&NOOP, grid, &[], &[]), Ok(()));
        }
        assert_eq!(run(&NOOP, [0, 4, 1], &[1, 2], &[]), Ok(()));
    }
}
