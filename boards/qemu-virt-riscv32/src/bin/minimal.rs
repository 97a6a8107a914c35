//! The runtime alone (`ember_firmware::minimal`): what `cargo xtask size` reports.
#![no_std]
#![no_main]
// riscv-rt's `entry` macro makes an undocumented function.
#![allow(missing_docs)]

use ember_firmware::semihosting::{fault, finish};

#[riscv_rt::entry]
fn main() -> ! {
    let Some(device_memory) = qemu_virt_riscv32::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::minimal::run(device_memory))
}
