//! A TFLite model, run on every case of TensorFlow Lite Micro's oracle and checked against
//! TFLM's outputs on the device (see `ember_firmware::model`): `cargo xtask run --board B
//! --model M` builds it with the model's cases embedded.
#![no_std]
#![no_main]

use ember_firmware::semihosting::finish;

/// Called by `start.s` once the core is set up.
#[no_mangle]
extern "C" fn board_main() -> ! {
    #[cfg(feature = "cores")]
    if !ember_firmware::cores::start(qemu_virt_aarch64::start_second_core) {
        finish(false);
    }
    finish(ember_firmware::model::run(qemu_virt_aarch64::NAME))
}
