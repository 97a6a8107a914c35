//! Instructions a call executes, counted on a QEMU board run with `-icount shift=0`.
//!
//! Under `-icount shift=0` QEMU advances its virtual clock by exactly 1 ns per executed
//! instruction, so any clock a board has counts instructions:
//!
//! - RISC-V: `minstret`, which QEMU derives from that count: exact.
//! - AArch64: the PMU's cycle counter `PMCCNTR_EL0`, at QEMU's 1 GHz: exact.
//! - Cortex-M (no cycle counter under QEMU): a timer that ticks every few dozen
//!   instructions ([`tick`]). A measurement starts on a tick edge and ends by counting the
//!   turns of a loop of known length up to the next edge, then subtracts a fixed overhead
//!   calibrated from a loop of exactly `10n + 3` instructions; the result is within a few
//!   instructions. The calibration's own call counts as overhead, so there a count is of
//!   the function's body, where the exact counters include the call (a few instructions).
//!
//! The same measure times every engine (Ember and its peers) on a board. Without `-icount`
//! the figures are wall-clock noise.
#![no_std]

pub mod stack;
#[cfg(target_arch = "arm")]
pub mod tick;

#[cfg(target_arch = "arm")]
pub use tick::instructions;

/// Instructions `f` executes (its call included).
#[cfg(target_arch = "riscv32")]
pub fn instructions(f: &mut dyn FnMut()) -> u64 {
    let start = minstret();
    f();
    minstret().wrapping_sub(start)
}

#[cfg(target_arch = "riscv32")]
fn minstret() -> u64 {
    loop {
        let (hi, lo, hi2): (u32, u32, u32);
        // SAFETY: reading the machine-mode counters has no side effects; the firmware runs
        // in machine mode, where they are readable.
        unsafe {
            core::arch::asm!(
                "csrr {0}, minstreth", "csrr {1}, minstret", "csrr {2}, minstreth",
                out(reg) hi, out(reg) lo, out(reg) hi2,
                options(nomem, nostack),
            );
        }
        if hi == hi2 {
            return (u64::from(hi) << 32) | u64::from(lo);
        }
    }
}

/// Instructions `f` executes (its call included).
#[cfg(target_arch = "aarch64")]
pub fn instructions(f: &mut dyn FnMut()) -> u64 {
    start_cycle_counter();
    let start = pmccntr();
    f();
    pmccntr().wrapping_sub(start)
}

#[cfg(target_arch = "aarch64")]
fn start_cycle_counter() {
    // SAFETY: the firmware runs at EL1, where the PMU's control registers are writable;
    // enabling the cycle counter (PMCR_EL0.E, PMCNTENSET_EL0.C) changes no other state.
    unsafe {
        core::arch::asm!(
            "mrs {t}, pmcr_el0", "orr {t}, {t}, #1", "msr pmcr_el0, {t}",
            "mov {t}, #(1 << 31)", "msr pmcntenset_el0, {t}", "isb",
            t = out(reg) _,
            options(nostack),
        );
    }
}

#[cfg(target_arch = "aarch64")]
fn pmccntr() -> u64 {
    let n: u64;
    // SAFETY: reading the cycle counter has no side effects.
    unsafe {
        core::arch::asm!("isb", "mrs {0}, pmccntr_el0", out(reg) n, options(nomem, nostack));
    }
    n
}

/// The median of `runs` measurements of `f` after one unmeasured warm-up call.
pub fn median(runs: usize, f: &mut dyn FnMut()) -> u64 {
    const MAX: usize = 15;
    let runs = runs.clamp(1, MAX);
    f();
    let mut counts = [0u64; MAX];
    for count in counts.iter_mut().take(runs) {
        *count = instructions(f);
    }
    let counts = &mut counts[..runs];
    counts.sort_unstable();
    counts[runs / 2]
}

/// The largest error of the measure over [`spin`] loops of known length (0 where the counter
/// is exact): the firmware reports it beside its figures.
pub fn self_check() -> u64 {
    let mut worst = 0;
    for n in [0u32, 1, 7, 100, 1234, 50_000] {
        let expected = 10 * u64::from(n) + 3;
        let got = instructions(&mut || spin(n));
        // The call's own instructions are part of every count: compare the increments.
        let base = instructions(&mut || spin(0));
        let error = got.abs_diff(base + expected - 3);
        worst = worst.max(error);
    }
    worst
}

/// A loop of exactly `10 * n + 3` instructions, the measure's calibration and self-check.
#[inline(never)]
pub fn spin(n: u32) {
    #[cfg(target_arch = "arm")]
    tick::spin(n);
    // SAFETY: register-only arithmetic and a local branch.
    #[cfg(target_arch = "riscv32")]
    unsafe {
        core::arch::asm!(
            "mv {i}, {n}",
            "nop",
            "beqz {i}, 3f",
            "2:",
            "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
            "addi {i}, {i}, -1",
            "bnez {i}, 2b",
            "3:",
            n = in(reg) n,
            i = out(reg) _,
            options(nomem, nostack),
        );
    }
    // SAFETY: register-only arithmetic and a local branch.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!(
            "mov {i:w}, {n:w}",
            "nop",
            "cbz {i:w}, 3f",
            "2:",
            "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
            "sub {i:w}, {i:w}, #1",
            "cbnz {i:w}, 2b",
            "3:",
            n = in(reg) n,
            i = out(reg) _,
            options(nomem, nostack),
        );
    }
}
