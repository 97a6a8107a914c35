//! The board alone: start-up, one log line, exit. `cargo xtask size` subtracts it from
//! `minimal` to give the runtime's own share.
#![no_std]
#![no_main]

/// Called by `start.s` once the core is set up.
#[no_mangle]
extern "C" fn board_main() -> ! {
    ember_firmware::bare::run(qemu_virt_aarch64::NAME);
    ember_firmware::semihosting::finish(true)
}
