//! The firmware: the digits model and the on-target tests (see `ember-firmware`).
#![no_std]
#![no_main]
// riscv-rt's `entry` macro makes an undocumented function.
#![allow(missing_docs)]

use ember_firmware::semihosting::{fault, finish};

#[riscv_rt::entry]
fn main() -> ! {
    qemu_virt_riscv32::init_heap();
    let Some(device_memory) = qemu_virt_riscv32::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::run(ember_firmware::Board {
        name: qemu_virt_riscv32::NAME,
        device_memory,
        shared_inputs: None,
    }))
}
