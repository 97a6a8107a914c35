//! A firmware that never ends: `cargo xtask test` checks QEMU is killed at its time limit
//! and the run fails.
#![no_std]
#![no_main]

use mps2_an386 as _;

#[allow(clippy::empty_loop)]
#[cortex_m_rt::entry]
fn main() -> ! {
    loop {}
}
