//! The board alone: start-up, one log line, exit. `cargo xtask size` subtracts it from
//! `minimal` to give the runtime's own share.
#![no_std]
#![no_main]

#[cortex_m_rt::entry]
fn main() -> ! {
    ember_firmware::bare::run(lm3s6965evb::NAME);
    ember_firmware::semihosting::finish(true)
}
