//! The firmware: the digits model and the on-target tests (see `ember-firmware`).
#![no_std]
#![no_main]

use ember_firmware::semihosting::{fault, finish};

#[cortex_m_rt::entry]
fn main() -> ! {
    mps2_an386::init_heap();
    let Some(device_memory) = mps2_an386::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::run(ember_firmware::Board {
        name: mps2_an386::NAME,
        device_memory,
        shared_inputs: None,
    }))
}
