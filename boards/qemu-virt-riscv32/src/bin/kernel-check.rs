//! The tuned int8 kernels against the portable ones on the RV32IMAC core itself, each
//! timed at model-sized shapes (`ember_firmware::kernel_check`; `icount` counts the
//! instructions QEMU retires).
#![no_std]
#![no_main]
// riscv-rt's `entry` macro makes an undocumented function.
#![allow(missing_docs)]

use ember_firmware::semihosting::finish;

#[riscv_rt::entry]
fn main() -> ! {
    qemu_virt_riscv32::init_heap();
    finish(ember_firmware::kernel_check::run())
}
