//! The runtime alone (`ember_firmware::minimal`): what `cargo xtask size` reports.
#![no_std]
#![no_main]

use ember_firmware::semihosting::{fault, finish};

/// Called by `start.s` once the core is set up.
#[no_mangle]
extern "C" fn board_main() -> ! {
    let Some(device_memory) = qemu_virt_aarch64::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::minimal::run(device_memory))
}
