//! The Cortex-M measure: a timer that ticks every few dozen instructions, read on tick edges.
//!
//! A measurement waits for a tick edge, calls the function, then counts the turns of a
//! 4-instruction loop up to the next edge. Between the two edges lie
//! `ticks × instructions-per-tick` instructions: the function's, the loop's turns, and a fixed
//! overhead. Instructions per tick and the overhead are calibrated once, from [`spin`] loops
//! of exactly `10n + 3` instructions.

use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(all(feature = "cmsdk-dualtimer", feature = "systick"))]
compile_error!("icount: pick one Cortex-M clock feature, `cmsdk-dualtimer` or `systick`");
#[cfg(not(any(feature = "cmsdk-dualtimer", feature = "systick")))]
compile_error!("icount: a Cortex-M board names its clock: feature `cmsdk-dualtimer` or `systick`");

/// The CMSDK APB dual timer's Timer1: a 32-bit down-counter.
#[cfg(feature = "cmsdk-dualtimer")]
mod clock {
    const BASE: usize = 0x4000_2000;
    /// The counter's current value.
    pub const VALUE: *const u32 = (BASE + 0x04) as *const u32;
    /// Bits the counter has.
    pub const MASK: u32 = u32::MAX;

    /// Starts the timer free-running from its top, if it is not running.
    pub fn start() {
        let load = BASE as *mut u32;
        let control = (BASE + 0x08) as *mut u32;
        // SAFETY: the MPS2 boards map the dual timer's registers at BASE; the firmware owns
        // the timer (nothing else programs it), and these volatile accesses only start it:
        // enable (bit 7), 32-bit (bit 1), free-running, no prescaler, no interrupt.
        unsafe {
            if control.read_volatile() & 0x80 == 0 {
                load.write_volatile(u32::MAX);
                control.write_volatile(0x82);
            }
        }
    }
}

/// The Cortex-M SysTick on the processor clock: a 24-bit down-counter.
#[cfg(feature = "systick")]
mod clock {
    /// The counter's current value (SYST_CVR).
    pub const VALUE: *const u32 = 0xE000_E018 as *const u32;
    /// Bits the counter has.
    pub const MASK: u32 = 0x00FF_FFFF;

    /// Starts SysTick free-running from its top, if it is not running.
    pub fn start() {
        let csr = 0xE000_E010 as *mut u32;
        let rvr = 0xE000_E014 as *mut u32;
        // SAFETY: SysTick's registers exist at these addresses on every Cortex-M; the firmware
        // owns SysTick (nothing else programs it) and enables it without its interrupt.
        unsafe {
            if csr.read_volatile() & 1 == 0 {
                rvr.write_volatile(MASK);
                (VALUE as *mut u32).write_volatile(0);
                csr.write_volatile(0b101);
            }
        }
    }
}

/// Instructions per turn of the loop that counts up to the end edge.
const TURN: u64 = 4;

/// Waits for the counter to leave `now`; returns its new value.
#[inline(always)]
fn next_edge(now: u32) -> u32 {
    let value: u32;
    // SAFETY: reads the timer's value register (mapped, side-effect free) until it changes.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {v}, [{a}]",
            "cmp {v}, {t}",
            "beq 2b",
            a = in(reg) clock::VALUE,
            t = in(reg) now,
            v = out(reg) value,
            options(nostack, readonly),
        );
    }
    value
}

/// Counts turns of a [`TURN`]-instruction loop until the counter leaves `now`; returns the
/// new value and the turns.
#[inline(always)]
fn turns_to_edge(now: u32) -> (u32, u32) {
    let (value, turns): (u32, u32);
    // SAFETY: as in `next_edge`; the count lives in a register.
    unsafe {
        core::arch::asm!(
            "mov {k}, #0",
            "2:",
            "ldr {v}, [{a}]",
            "add {k}, {k}, #1",
            "cmp {v}, {t}",
            "beq 2b",
            a = in(reg) clock::VALUE,
            t = in(reg) now,
            v = out(reg) value,
            k = out(reg) turns,
            options(nostack, readonly),
        );
    }
    (value, turns)
}

fn read() -> u32 {
    // SAFETY: the timer's value register is mapped and reading it has no side effects.
    unsafe { clock::VALUE.read_volatile() }
}

/// Ticks between the edge before `f` and the edge after it, and the turns counted after it.
#[inline(never)]
fn raw(f: &mut dyn FnMut()) -> (u64, u64) {
    clock::start();
    let start = next_edge(read());
    f();
    let (end, turns) = turns_to_edge(read());
    let ticks = start.wrapping_sub(end) & clock::MASK;
    (u64::from(ticks), u64::from(turns))
}

/// Calibration: instructions per tick as `PER_TICK_NUM / PER_TICK_DEN`, and the overhead.
static PER_TICK_NUM: AtomicU32 = AtomicU32::new(0);
static PER_TICK_DEN: AtomicU32 = AtomicU32::new(0);
static OVERHEAD: AtomicU32 = AtomicU32::new(0);

/// Turns of [`spin`] in the long calibration run (`10n + 3` ≈ 1 M instructions).
const CALIBRATION_TURNS: u32 = 100_000;

fn calibrate() -> (u64, u64, u64) {
    let den = PER_TICK_DEN.load(Ordering::Relaxed);
    if den != 0 {
        return (
            PER_TICK_NUM.load(Ordering::Relaxed).into(),
            den.into(),
            OVERHEAD.load(Ordering::Relaxed).into(),
        );
    }
    let (short_ticks, short_turns) = raw(&mut || spin(0));
    let (long_ticks, long_turns) = raw(&mut || spin(CALIBRATION_TURNS));
    // long − short spans exactly 10 × CALIBRATION_TURNS instructions of `spin`, plus the
    // difference in counted turns.
    let num = 10 * u64::from(CALIBRATION_TURNS) + TURN * long_turns - TURN * short_turns;
    let den = long_ticks.saturating_sub(short_ticks).max(1);
    let overhead = (short_ticks * num / den).saturating_sub(TURN * short_turns + 3);
    PER_TICK_NUM.store(num as u32, Ordering::Relaxed);
    PER_TICK_DEN.store(den as u32, Ordering::Relaxed);
    OVERHEAD.store(overhead as u32, Ordering::Relaxed);
    (num, den, overhead)
}

/// Instructions `f` executes (its call included). The first call also calibrates.
pub fn instructions(f: &mut dyn FnMut()) -> u64 {
    let (num, den, overhead) = calibrate();
    let (ticks, turns) = raw(f);
    // Rounded to the nearest instruction.
    let between = (ticks * num + den / 2) / den;
    between.saturating_sub(TURN * turns + overhead)
}

/// Exactly `10 * n + 3` instructions.
#[inline(always)]
pub(crate) fn spin(n: u32) {
    // SAFETY: register-only arithmetic and a local branch.
    unsafe {
        core::arch::asm!(
            "mov {i}, {n}",
            "cmp {i}, #0",
            "beq 3f",
            "2:",
            "nop", "nop", "nop", "nop", "nop", "nop", "nop", "nop",
            "subs {i}, {i}, #1",
            "bne 2b",
            "3:",
            n = in(reg) n,
            i = out(reg) _,
            options(nomem, nostack),
        );
    }
}
