//! A firmware that takes a fault (an undefined instruction): `cargo xtask test` checks the
//! run fails (exit 102, from the HardFault handler).
#![no_std]
#![no_main]

use mps2_an386 as _;

#[cortex_m_rt::entry]
fn main() -> ! {
    cortex_m::asm::udf()
}
