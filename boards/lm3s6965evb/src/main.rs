//! The firmware: the digits model and the on-target tests (see `ember-firmware`).
#![no_std]
#![no_main]

use ember_firmware::semihosting::{fault, finish};

#[cortex_m_rt::entry]
fn main() -> ! {
    let Some(device_memory) = lm3s6965evb::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::run(ember_firmware::Board {
        name: lm3s6965evb::NAME,
        device_memory,
        shared_inputs: None,
    }))
}
