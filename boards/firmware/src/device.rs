//! The firmware's devices: each lives in a `static` laid out at compile time from
//! [`LocalDevice::EMPTY`] and is given its memory in place, so its tables (tens of KiB) are
//! never built on the stack, which matters on a board with 64 KiB of RAM.

use crate::config::TRANSIENT_BYTES;
use hal_local::alloc::DeviceAllocator;
use hal_local::kernel::Kernel;
use hal_local::{LocalConfig, LocalDevice};
use static_cell::ConstStaticCell;

/// Takes `cell`'s device and gives it `memory`, a module's `kernels` and the firmware's
/// arena ([`TRANSIENT_BYTES`]); `None` if the device was taken before.
/// Always inlined: as a call, LTO keeps `init` out of line and `minimal` grows by 1.4 KB.
#[inline(always)]
pub fn take<const O: usize, const S: usize, const N: usize, const P: usize, A: DeviceAllocator>(
    cell: &'static ConstStaticCell<LocalDevice<'static, O, S, N, P, A>>,
    memory: &'static mut [u8],
    kernels: &'static [Kernel],
) -> Option<Result<&'static mut LocalDevice<'static, O, S, N, P, A>, hal_core::Error>> {
    let device = cell.try_take()?;
    let config = LocalConfig {
        kernels,
        transient_bytes: TRANSIENT_BYTES,
        ..LocalConfig::DEFAULT
    };
    Some(device.init(memory, config).map(|()| device))
}
