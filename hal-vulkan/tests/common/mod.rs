//! What several of the driver's test files share.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// A turn to run alone among the tests of one test binary that take it, held until
/// dropped; a test that panicked does not keep the others from theirs.
///
/// Tests that make devices with the validation layer on take one for their whole body:
/// the Khronos validation layer Debian 12 ships (1.3.239) keeps its per-device state in
/// one map for the whole process and reads it on every call without a lock, so a thread
/// that makes or drops a device while another calls into a different one can crash the
/// process (Vulkan-ValidationLayers issue 4391).
pub fn alone() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}
