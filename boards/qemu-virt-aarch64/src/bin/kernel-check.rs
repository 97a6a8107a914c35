//! The tuned int8 kernels against the portable ones on the Cortex-A53 itself, each timed
//! at model-sized shapes (`ember_firmware::kernel_check`; `icount` counts the instructions
//! QEMU retires).
#![no_std]
#![no_main]

use ember_firmware::semihosting::finish;

/// Called by `start.s` once the core is set up.
#[no_mangle]
extern "C" fn board_main() -> ! {
    qemu_virt_aarch64::init_heap();
    finish(ember_firmware::kernel_check::run())
}
