//! The tuned int8 kernels against the portable ones on the Cortex-M4 itself, each timed at
//! model-sized shapes (`ember_firmware::kernel_check`). Under `qemu-system-arm -icount
//! shift=0` one virtual nanosecond is one instruction, so the CMSDK dual timer (25 MHz:
//! one tick per 40 instructions) counts instructions.
//!
//! ```text
//! cargo build --release -p mps2-an386 --target thumbv7em-none-eabihf --bin kernel-check
//! qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
//!   -serial none -semihosting-config enable=on,target=native -icount shift=0 \
//!   -kernel target/thumbv7em-none-eabihf/release/kernel-check \
//!   | defmt-print -e target/thumbv7em-none-eabihf/release/kernel-check
//! ```
#![no_std]
#![no_main]

use ember_firmware::semihosting::finish;

#[cortex_m_rt::entry]
fn main() -> ! {
    mps2_an386::init_heap();
    finish(ember_firmware::kernel_check::run())
}
