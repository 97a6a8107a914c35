//! The runtime alone: a hal-local device, a [`Session`] over an embedded module with one
//! `fill_u32` dispatch and one copy of an imported constant, one invocation, its result
//! checked. `cargo xtask size` measures the board's `minimal` binary, which runs only this.

use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{BufferSpan, Device, QueueAffinity};
use hal_local::LocalDevice;
use static_cell::ConstStaticCell;

/// The embedded module: `MODULE`, `KERNELS`, `ARENA_BYTES` (see `ember-build`).
#[allow(missing_docs)]
pub mod module {
    include!(concat!(env!("OUT_DIR"), "/minimal_module.rs"));
}

/// The word the module's dispatch writes.
const PATTERN: u32 = 0xE3BE_0001;

/// The smallest device that runs it: 8 objects, 16 command slots, 8 allocator nodes, 2
/// pending operations.
pub type MinimalDevice = LocalDevice<'static, 8, 16, 8, 2>;

/// Runs the module once over `memory`; `true` if the result is what the module computes
/// (64 bytes of the pattern, then 64 bytes of the constant's ones) and nothing leaked.
pub fn run(memory: &'static mut [u8]) -> bool {
    static DEVICE: ConstStaticCell<MinimalDevice> = ConstStaticCell::new(MinimalDevice::EMPTY);
    let Some(Ok(dev)) = crate::device::take(&DEVICE, memory, &module::KERNELS) else {
        say!("minimal: the device refused its memory");
        return false;
    };
    let Ok(mut session) =
        Session::<'static, 1, 1, 1>::load(dev, module::MODULE, LoadOptions::default())
    else {
        say!("minimal: the module did not load");
        return false;
    };
    let mut out = [0u8; 128];
    let ran = session
        .allocate_results(dev, 0, ResultMemory::DeviceLocal)
        .and_then(|results| {
            let span = BufferSpan::whole(results[0]);
            session.invoke(dev, 0, &[], &[span], QueueAffinity::ANY)?;
            dev.read_buffer(span, &mut out)?;
            dev.release_buffer(results[0])
        });
    let released = session.release(dev);
    let filled = out[..64]
        .chunks_exact(4)
        .all(|w| w == PATTERN.to_le_bytes());
    let copied = out[64..].iter().all(|&b| b == 1);
    let ok = ran.is_ok()
        && released.is_ok()
        && filled
        && copied
        && dev.object_counts() == Default::default();
    say!("minimal: {}", if ok { "PASS" } else { "FAIL" });
    ok
}
