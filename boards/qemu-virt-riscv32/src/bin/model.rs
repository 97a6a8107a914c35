//! A TFLite model, run on every case of TensorFlow Lite Micro's oracle and checked against
//! TFLM's outputs on the device (see `ember_firmware::model`): `cargo xtask run --board B
//! --model M` builds it with the model's cases embedded.
#![no_std]
#![no_main]
// riscv-rt's `entry` macro makes an undocumented function.
#![allow(missing_docs)]

use ember_firmware::semihosting::finish;

#[riscv_rt::entry]
fn main() -> ! {
    finish(ember_firmware::model::run(qemu_virt_riscv32::NAME))
}
