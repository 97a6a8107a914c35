//! The firmware: the digits model (inputs imported in place from shared DRAM) and the
//! on-target tests (see `ember-firmware`).
#![no_std]
#![no_main]

use ember_firmware::semihosting::{fault, finish};

/// Called by `start.s` once the core is set up.
#[no_mangle]
extern "C" fn board_main() -> ! {
    qemu_virt_aarch64::init_heap();
    #[cfg(feature = "cores")]
    if !ember_firmware::cores::start(qemu_virt_aarch64::start_second_core) {
        finish(false);
    }
    let (Some(device_memory), Some(shared_inputs)) = (
        qemu_virt_aarch64::device_memory(),
        qemu_virt_aarch64::shared_inputs(),
    ) else {
        fault("a memory region was taken twice");
    };
    finish(ember_firmware::run(ember_firmware::Board {
        name: qemu_virt_aarch64::NAME,
        device_memory,
        shared_inputs: Some(shared_inputs),
    }))
}
