//! QEMU's Arm `virt` machine, 64-bit (`aarch64-unknown-none`): `qemu-system-aarch64 -machine
//! virt -cpu cortex-a53`, standing in for an edge SoC whose accelerator shares DRAM with the
//! CPU. Its own start-up (`start.s`: EL1, identity-mapped MMU, vectors) and linker script
//! (`link.x`), which sets 32 MiB of DRAM apart as the region both sides use
//! (`.shared_dram`): the hal-local device's memory lives there, and so do the inputs, which
//! the firmware writes once and the device imports in place, with no copy. Logs and exit over
//! semihosting, an 8 MiB `embedded-alloc` heap with the `heap` feature (on by default).
#![no_std]

use static_cell::ConstStaticCell;

core::arch::global_asm!(include_str!("start.s"));

/// The board's name in logs.
pub const NAME: &str = "qemu-virt-aarch64";

// The device's memory region (the answers of every image at once, and the arena) lives in
// shared DRAM, as do the inputs below; the 8 MiB heap is ordinary RAM.
ember_firmware::board_memory!(
    #[link_section = ".shared_dram"]
    device: 64 * 1024,
    heap: 8 * 1024 * 1024,
);

/// Bytes of shared DRAM for the inputs (every held-out image as `f32`s: 896 × 256 bytes).
pub const SHARED_INPUT_BYTES: usize = 256 * 1024;
/// Kernels read `f32`s in place: the inputs start on a cache line.
#[repr(C, align(64))]
struct Aligned([u8; SHARED_INPUT_BYTES]);
#[link_section = ".shared_dram"]
static SHARED_INPUTS: ConstStaticCell<Aligned> =
    ConstStaticCell::new(Aligned([0; SHARED_INPUT_BYTES]));

/// The shared input region (64-byte aligned); `None` after the first call.
pub fn shared_inputs() -> Option<&'static mut [u8]> {
    SHARED_INPUTS.try_take().map(|m| m.0.as_mut_slice())
}

/// Any exception (every vector leads here): fail the run.
#[no_mangle]
extern "C" fn board_exception() -> ! {
    ember_firmware::semihosting::fault("AArch64 exception")
}

/// Critical sections on one core whose interrupts are never unmasked.
struct Masked;
critical_section::set_impl!(Masked);

// SAFETY: `start.s` masks every interrupt (`msr daifset, #0xf`) before any Rust code runs,
// nothing unmasks them, and only core 0 runs: no code can ever preempt a critical section,
// so entering one needs to do nothing.
unsafe impl critical_section::Impl for Masked {
    unsafe fn acquire() -> critical_section::RawRestoreState {}
    unsafe fn release(_restore: critical_section::RawRestoreState) {}
}
