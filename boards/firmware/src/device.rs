//! The firmware's devices: each one's tables live in a `static` [`LocalStorage`] laid out at
//! compile time from [`LocalStorage::EMPTY`], so they (tens of KiB) are never built on the
//! stack, which matters on a board with 64 KiB of RAM; the device that borrows them is a few
//! hundred bytes.

use crate::config::TRANSIENT_BYTES;
use hal_local::alloc::DeviceAllocator;
use hal_local::kernel::Kernel;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};
use static_cell::ConstStaticCell;

/// Takes `cell`'s storage and makes a device of it with `memory`, a module's `kernels` and
/// the firmware's arena ([`TRANSIENT_BYTES`]); `None` if the storage was taken before.
/// Always inlined: as a call, LTO keeps `init` out of line and `minimal` grows by 1.4 KB.
#[inline(always)]
pub fn take<const O: usize, const S: usize, const N: usize, const P: usize, A: DeviceAllocator>(
    cell: &'static ConstStaticCell<LocalStorage<O, S, N, P, A>>,
    memory: &'static mut [u8],
    kernels: &'static [Kernel],
) -> Option<Result<LocalDevice<'static, A>, hal_core::Error>> {
    let storage = cell.try_take()?;
    let config = crate::local_config(LocalConfig {
        kernels,
        transient_bytes: TRANSIENT_BYTES,
        ..LocalConfig::DEFAULT
    });
    Some(LocalDevice::new(storage, memory, config))
}
