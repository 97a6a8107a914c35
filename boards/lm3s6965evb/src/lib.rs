//! The TI LM3S6965 evaluation board (Cortex-M3, `thumbv7m-none-eabi`: no FPU, so `f32` is
//! done in software) as QEMU models it: `qemu-system-arm -machine lm3s6965evb`. 256 KiB of
//! flash and only 64 KiB of RAM (`memory.x`), and no heap: everything the firmware uses is a
//! static or on the stack. cortex-m-rt's reset handler, `critical-section` from the cortex-m
//! crate (single core), logs and exit over semihosting.
#![no_std]

// The `critical-section` implementation (single core: interrupts masked).
use cortex_m as _;
use cortex_m_rt::{exception, ExceptionFrame};
use ember_firmware::semihosting::fault;

/// The board's name in logs.
pub const NAME: &str = "lm3s6965evb";

ember_firmware::board_memory!(device: 4 * 1024);

#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    fault("HardFault")
}

#[exception]
unsafe fn DefaultHandler(_irq: i16) {
    fault("unexpected exception or interrupt")
}
