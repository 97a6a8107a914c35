//! The Arm MPS2 AN386 board (Cortex-M4F, `thumbv7em-none-eabihf`) as QEMU models it:
//! `qemu-system-arm -machine mps2-an386`. Code in SSRAM1, data in SSRAM2/3 (`memory.x`),
//! cortex-m-rt's reset handler (which also turns the FPU on), `critical-section` from the
//! cortex-m crate (single core), logs and exit over semihosting, and with the `heap` feature
//! (on by default) a 3.5 MiB `embedded-alloc` heap.
#![no_std]

// The `critical-section` implementation (single core: interrupts masked).
use cortex_m as _;
use cortex_m_rt::{exception, ExceptionFrame};
use ember_firmware::semihosting::fault;

/// The board's name in logs.
pub const NAME: &str = "mps2-an386";

ember_firmware::board_memory!(device: 8 * 1024, heap: 3584 * 1024);

#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    fault("HardFault")
}

#[exception]
unsafe fn DefaultHandler(_irq: i16) {
    fault("unexpected exception or interrupt")
}
