//! A firmware whose check fails: `cargo xtask test` checks the run fails (exit 1).
#![no_std]
#![no_main]

use mps2_an386 as _;

#[cortex_m_rt::entry]
fn main() -> ! {
    ember_firmware::semihosting::finish(core::hint::black_box(false))
}
