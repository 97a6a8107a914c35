//! The runtime alone (`ember_firmware::minimal`): what `cargo xtask size` reports.
#![no_std]
#![no_main]

use ember_firmware::semihosting::{fault, finish};

#[cortex_m_rt::entry]
fn main() -> ! {
    let Some(device_memory) = mps2_an386::device_memory() else {
        fault("the device memory was taken twice");
    };
    finish(ember_firmware::minimal::run(device_memory))
}
