//! The emulated host board: the firmware every QEMU board runs (the digits model embedded at
//! build time and checked, the on-target tests), as a std program. Logs go to stdout with
//! `println!`, critical sections are critical-section's std mutex, the heap is std's, and the
//! exit status reports the result.

use std::process::ExitCode;

/// Bytes of the hal-local device's memory region.
const DEVICE_BYTES: usize = 64 * 1024;

fn main() -> ExitCode {
    let device_memory: &'static mut [u8] = Vec::leak(vec![0; DEVICE_BYTES]);
    let passed = ember_firmware::run(ember_firmware::Board {
        name: "host",
        device_memory,
        shared_inputs: None,
    });
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
