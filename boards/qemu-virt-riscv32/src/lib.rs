//! QEMU's RISC-V `virt` machine, 32-bit (`riscv32imac-unknown-none-elf`):
//! `qemu-system-riscv32 -machine virt -bios none`. Everything in DRAM at 0x80000000
//! (`memory.x`), riscv-rt's start-up in machine mode, `critical-section` from the riscv crate
//! (single hart: interrupts masked), logs and exit over semihosting, and with the `heap`
//! feature (on by default) an 8 MiB `embedded-alloc` heap.
#![no_std]

// The `critical-section` implementation (single hart).
use riscv as _;
use static_cell::ConstStaticCell;

/// The board's name in logs.
pub const NAME: &str = "qemu-virt-riscv32";

/// Bytes of the hal-local device's memory region.
pub const DEVICE_BYTES: usize = 8 * 1024;
static DEVICE_MEMORY: ConstStaticCell<[u8; DEVICE_BYTES]> = ConstStaticCell::new([0; DEVICE_BYTES]);

/// The device's memory region; `None` after the first call.
pub fn device_memory() -> Option<&'static mut [u8]> {
    DEVICE_MEMORY.try_take().map(|m| m.as_mut_slice())
}

/// Bytes of the heap.
#[cfg(feature = "heap")]
pub const HEAP_BYTES: usize = 8 * 1024 * 1024;
#[cfg(feature = "heap")]
static HEAP_MEMORY: ConstStaticCell<[core::mem::MaybeUninit<u8>; HEAP_BYTES]> =
    ConstStaticCell::new([core::mem::MaybeUninit::uninit(); HEAP_BYTES]);

/// Gives the heap its memory (once; later calls do nothing).
pub fn init_heap() {
    #[cfg(feature = "heap")]
    if let Some(memory) = HEAP_MEMORY.try_take() {
        ember_firmware::heap::init(memory);
    }
}

/// An exception (a fault, an illegal instruction, a misaligned access): fail the run.
#[export_name = "ExceptionHandler"]
fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
    ember_firmware::semihosting::fault("RISC-V exception")
}

/// An interrupt nothing enabled: fail the run.
#[export_name = "DefaultHandler"]
fn default_handler() {
    ember_firmware::semihosting::fault("unexpected interrupt")
}
