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
use static_cell::ConstStaticCell;

/// The board's name in logs.
pub const NAME: &str = "lm3s6965evb";

/// Bytes of the hal-local device's memory region.
pub const DEVICE_BYTES: usize = 4 * 1024;
static DEVICE_MEMORY: ConstStaticCell<[u8; DEVICE_BYTES]> = ConstStaticCell::new([0; DEVICE_BYTES]);

/// The device's memory region; `None` after the first call.
pub fn device_memory() -> Option<&'static mut [u8]> {
    DEVICE_MEMORY.try_take().map(|m| m.as_mut_slice())
}

#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    fault("HardFault")
}

#[exception]
unsafe fn DefaultHandler(_irq: i16) {
    fault("unexpected exception or interrupt")
}
