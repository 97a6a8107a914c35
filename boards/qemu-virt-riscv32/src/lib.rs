//! QEMU's RISC-V `virt` machine, 32-bit (`riscv32imac-unknown-none-elf`):
//! `qemu-system-riscv32 -machine virt -bios none`. Everything in DRAM at 0x80000000
//! (`memory.x`), riscv-rt's start-up in machine mode, `critical-section` from the riscv crate
//! (single hart: interrupts masked), logs and exit over semihosting, and with the `heap`
//! feature (on by default) an 8 MiB `embedded-alloc` heap.
#![no_std]

// The `critical-section` implementation (single hart).
use riscv as _;

/// The board's name in logs.
pub const NAME: &str = "qemu-virt-riscv32";

ember_firmware::board_memory!(device: 8 * 1024, heap: 8 * 1024 * 1024);

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
