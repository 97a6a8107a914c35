//! The harness alone: start-up, one line over semihosting, exit, with the harness's panic and
//! exception handlers linked. `cargo xtask bench boards` subtracts its footprint from each
//! model's, as it subtracts Ember's board `bare` from Ember's.
#![no_std]
#![no_main]

// The harness's panic handler and exception handlers.
use microflow_peer as _;

#[cortex_m_rt::entry]
fn main() -> ! {
    semihosting::println!("bare: the MicroFlow harness started");
    semihosting::process::exit(0)
}
