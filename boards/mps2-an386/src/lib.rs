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
use static_cell::ConstStaticCell;

/// The board's name in logs.
pub const NAME: &str = "mps2-an386";

/// Bytes of the hal-local device's memory region.
pub const DEVICE_BYTES: usize = 8 * 1024;
static DEVICE_MEMORY: ConstStaticCell<[u8; DEVICE_BYTES]> = ConstStaticCell::new([0; DEVICE_BYTES]);

/// The device's memory region; `None` after the first call.
pub fn device_memory() -> Option<&'static mut [u8]> {
    DEVICE_MEMORY.try_take().map(|m| m.as_mut_slice())
}

/// Bytes of the heap.
#[cfg(feature = "heap")]
pub const HEAP_BYTES: usize = 3584 * 1024;
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

#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    fault("HardFault")
}

#[exception]
unsafe fn DefaultHandler(_irq: i16) {
    fault("unexpected exception or interrupt")
}
