//! A firmware that panics: `cargo xtask test` checks the run fails (exit 101).
#![no_std]
#![no_main]

use mps2_an386 as _;

#[cortex_m_rt::entry]
fn main() -> ! {
    let limit = core::hint::black_box(3u32);
    if limit < 4 {
        panic!("probe: a deliberate panic");
    }
    ember_firmware::semihosting::finish(true)
}
