//! The DSP instructions as `asm!` (Armv7E-M: Cortex-M4, Cortex-M7), one safe function
//! each; the three shapes of instruction are written once, as macros.

use core::arch::asm;

/// A multiply-accumulate over 16-bit lanes: `fn(x, y, acc) -> acc + products`.
macro_rules! multiply_accumulate {
    ($(#[$doc:meta])* $name:ident = $mnemonic:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(x: u32, y: u32, acc: i32) -> i32 {
            let out: i32;
            // SAFETY: the instruction reads and writes registers only; it changes no
            // memory and no stack, and of the flags only the sticky Q, which
            // `preserves_flags` is not claimed for.
            unsafe {
                asm!(
                    concat!($mnemonic, " {out}, {x}, {y}, {acc}"),
                    out = lateout(reg) out,
                    x = in(reg) x,
                    y = in(reg) y,
                    acc = in(reg) acc,
                    options(pure, nomem, nostack),
                );
            }
            out
        }
    };
}

/// A byte-pair sign extension: `fn(x) -> lanes` (`$rotate`: "" or ", ror #8").
macro_rules! extend {
    ($(#[$doc:meta])* $name:ident = $rotate:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(x: u32) -> u32 {
            let out: u32;
            // SAFETY: SXTB16 reads and writes registers only and leaves every flag alone.
            unsafe {
                asm!(
                    concat!("sxtb16 {out}, {x}", $rotate),
                    out = lateout(reg) out,
                    x = in(reg) x,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            out
        }
    };
}

/// A byte-pair sign extension added to lanes: `fn(offsets, x) -> lanes`.
macro_rules! extend_add {
    ($(#[$doc:meta])* $name:ident = $rotate:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(offsets: u32, x: u32) -> u32 {
            let out: u32;
            // SAFETY: SXTAB16 reads and writes registers only and leaves every flag alone.
            unsafe {
                asm!(
                    concat!("sxtab16 {out}, {o}, {x}", $rotate),
                    out = lateout(reg) out,
                    o = in(reg) offsets,
                    x = in(reg) x,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            out
        }
    };
}

multiply_accumulate!(
    /// `acc + x.lo * y.lo + x.hi * y.hi`, the lanes signed 16-bit, the sum wrapping (SMLAD;
    /// it sets the sticky Q flag on overflow, which nothing here reads).
    smlad = "smlad"
);
multiply_accumulate!(
    /// `acc + x.lo * y.lo`, the lanes signed 16-bit, the sum wrapping (SMLABB).
    smlabb = "smlabb"
);
multiply_accumulate!(
    /// `acc + x.hi * y.hi`, the lanes signed 16-bit, the sum wrapping (SMLATT).
    smlatt = "smlatt"
);
extend!(
    /// Bytes 0 and 2 of `x`, sign-extended into the low and high lanes (SXTB16).
    sxtb16 = ""
);
extend!(
    /// Bytes 1 and 3 of `x`, sign-extended into the low and high lanes (SXTB16, ROR #8).
    sxtb16_ror8 = ", ror #8"
);
extend_add!(
    /// Bytes 0 and 2 of `x`, sign-extended, added lane by lane to `offsets` (SXTAB16; each
    /// lane wraps at 16 bits).
    sxtab16 = ""
);
extend_add!(
    /// Bytes 1 and 3 of `x`, sign-extended, added lane by lane to `offsets` (SXTAB16, ROR #8).
    sxtab16_ror8 = ", ror #8"
);

/// `a * b` in 64 bits (SMULL: one instruction, where the compiler's own lowering of the
/// widened product can take four).
#[inline(always)]
pub(crate) fn smull(a: i32, b: i32) -> i64 {
    let (lo, hi): (u32, i32);
    // SAFETY: SMULL reads and writes registers only and leaves every flag alone.
    unsafe {
        asm!(
            "smull {lo}, {hi}, {a}, {b}",
            lo = lateout(reg) lo,
            hi = lateout(reg) hi,
            a = in(reg) a,
            b = in(reg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    (i64::from(hi) << 32) | i64::from(lo)
}

/// Each signed byte lane of `x` clamped to the same lane's `[low, high]` (SSUB8 then SEL,
/// twice: each SSUB8 sets the lanes' GE flags that the next SEL reads).
#[inline(always)]
pub(crate) fn clamp8(x: u32, low: u32, high: u32) -> u32 {
    let out: u32;
    // SAFETY: register operands only: no memory, no stack; SSUB8 changes the GE flags,
    // which are not claimed preserved.
    unsafe {
        asm!(
            "ssub8 {t}, {x}, {low}",
            "sel {x}, {x}, {low}",
            "ssub8 {t}, {high}, {x}",
            "sel {x}, {x}, {high}",
            x = inout(reg) x => out,
            low = in(reg) low,
            high = in(reg) high,
            t = out(reg) _,
            options(pure, nomem, nostack),
        );
    }
    out
}
