//! The board alone: start-up, one log line, exit. `cargo xtask size` subtracts it from
//! `minimal` to give the runtime's own share.
#![no_std]
#![no_main]
// riscv-rt's `entry` macro makes an undocumented function.
#![allow(missing_docs)]

#[riscv_rt::entry]
fn main() -> ! {
    ember_firmware::bare::run(qemu_virt_riscv32::NAME);
    ember_firmware::semihosting::finish(true)
}
