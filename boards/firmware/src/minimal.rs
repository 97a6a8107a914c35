//! The runtime alone: hal-core and hal-local with one trivial kernel. A device over the
//! board's memory, one buffer, one `fill_u32` dispatch in a one-shot command buffer, the
//! result read back and checked, everything released. No module, no session: those are
//! measured by the digits firmware. `cargo xtask size` measures the board's `minimal`
//! binary, which runs only this.

use hal_core::memory::BufferParams;
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, ExecutableSource, Record, Submit,
    Workgroups,
};
use hal_local::alloc::Bump;
use hal_local::kernel::Kernel;
use hal_local::{LocalDevice, LocalStorage};
use static_cell::ConstStaticCell;

/// The word the dispatch writes.
const PATTERN: u32 = 0xE3BE_0001;

/// The one kernel the device links.
static KERNELS: [Kernel; 1] = [hal_local::kernels::FILL_U32];

/// The smallest device that runs it: 4 objects, 4 command slots, 4 allocator records, no
/// parked operations (it submits with `Submit::NOW`, so nothing ever waits), and the bump
/// allocator for its memory and command slots (it releases in reverse order).
pub type MinimalStorage = LocalStorage<4, 4, 4, 0, Bump<4>>;
/// The device over [`MinimalStorage`].
pub type MinimalDevice = LocalDevice<'static, Bump<4>>;

/// Fills a 64-byte buffer with [`PATTERN`] on the device and reads it back into `out`.
fn fill(dev: &mut MinimalDevice, out: &mut [u8; 64]) -> Result<(), Error> {
    let buffer = dev.allocate_buffer(BufferParams::device_local(), 64)?;
    let kernel = dev.load_executable(ExecutableSource::Kernel("fill_u32"))?;
    let commands = dev.create_command_buffer(CommandBufferMode::OneShot, 3, 0)?;
    dev.record(
        commands,
        Record::Dispatch {
            executable: kernel,
            workgroups: Workgroups::Direct([1, 1, 1]),
            constants: &[PATTERN],
            bindings: &[BufferRef::buffer(buffer)],
        },
    )?;
    dev.end(commands)?;
    dev.queue_execute(Submit::NOW, commands, &[])?;
    dev.read_buffer(BufferSpan::whole(buffer), out)?;
    dev.release_command_buffer(commands)?;
    dev.release_executable(kernel)?;
    dev.release_buffer(buffer)
}

/// Runs the fill once over `memory`; `true` if every word is [`PATTERN`] and nothing leaked.
pub fn run(memory: &'static mut [u8]) -> bool {
    static STORAGE: ConstStaticCell<MinimalStorage> = ConstStaticCell::new(MinimalStorage::EMPTY);
    let Some(Ok(mut dev)) = crate::device::take(&STORAGE, memory, &KERNELS) else {
        say!("minimal: the device refused its memory");
        return false;
    };
    let mut out = [0u8; 64];
    let ran = fill(&mut dev, &mut out);
    let filled = out.chunks_exact(4).all(|w| w == PATTERN.to_le_bytes());
    let ok = ran.is_ok() && filled && dev.object_counts() == Default::default();
    say!("minimal: {}", if ok { "PASS" } else { "FAIL" });
    ok
}
