//! The Armv7E-M DSP instructions the tuned kernels are built from, each a safe function
//! over plain integers (`asm!` on registers only: no memory, no stack).
//!
//! A word holds two signed 16-bit lanes, low half first. [`sxtb16`] and [`sxtb16_ror8`]
//! split four packed int8 values `[b0, b1, b2, b3]` (little-endian) into the lanes
//! `(b0, b2)` and `(b1, b3)`; [`smlad`] adds both lanes' products to an accumulator. A dot
//! product over four int8 pairs is thus two `smlad`s over the split words, its products
//! taken in the order `b0, b2, b1, b3`: int32 sums wrap (as TFLM's do), so the order
//! leaves the result bit for bit the same.

use core::arch::asm;

/// The first four int8 values of `c` as one little-endian word: one (unaligned) load; 0
/// for a shorter `c` (the callers' chunks are never shorter).
#[inline(always)]
pub(crate) fn word(c: &[i8]) -> u32 {
    match c.first_chunk::<4>() {
        // SAFETY: `c` refers to four initialized bytes, and `read_unaligned` needs no
        // alignment (Armv7-M loads an unaligned word in one instruction).
        Some(c) => u32::from_le(unsafe { c.as_ptr().cast::<u32>().read_unaligned() }),
        None => 0,
    }
}

/// The four int8 values at `p` as one little-endian word: one (unaligned) load.
///
/// # Safety
///
/// `p` points at four readable, initialized bytes.
#[inline(always)]
pub(crate) unsafe fn word_at(p: *const i8) -> u32 {
    // SAFETY: the caller keeps `p..p + 4` readable; `read_unaligned` needs no alignment.
    u32::from_le(unsafe { p.cast::<u32>().read_unaligned() })
}

/// `acc + x.lo * y.lo + x.hi * y.hi`, the lanes signed 16-bit, the sum wrapping (SMLAD;
/// it sets the sticky Q flag on overflow, which nothing here reads).
#[inline(always)]
pub(crate) fn smlad(x: u32, y: u32, acc: i32) -> i32 {
    let out: i32;
    // SAFETY: SMLAD reads and writes registers only; it changes no memory and no stack,
    // and of the flags only Q, which `preserves_flags` is not claimed for.
    unsafe {
        asm!(
            "smlad {out}, {x}, {y}, {acc}",
            out = lateout(reg) out,
            x = in(reg) x,
            y = in(reg) y,
            acc = in(reg) acc,
            options(pure, nomem, nostack),
        );
    }
    out
}

/// `acc + x.lo * y.lo`, the lanes signed 16-bit, the sum wrapping (SMLABB).
#[inline(always)]
pub(crate) fn smlabb(x: u32, y: u32, acc: i32) -> i32 {
    let out: i32;
    // SAFETY: registers only, as in `smlad`; SMLABB may set Q.
    unsafe {
        asm!(
            "smlabb {out}, {x}, {y}, {acc}",
            out = lateout(reg) out,
            x = in(reg) x,
            y = in(reg) y,
            acc = in(reg) acc,
            options(pure, nomem, nostack),
        );
    }
    out
}

/// `acc + x.hi * y.hi`, the lanes signed 16-bit, the sum wrapping (SMLATT).
#[inline(always)]
pub(crate) fn smlatt(x: u32, y: u32, acc: i32) -> i32 {
    let out: i32;
    // SAFETY: registers only, as in `smlad`; SMLATT may set Q.
    unsafe {
        asm!(
            "smlatt {out}, {x}, {y}, {acc}",
            out = lateout(reg) out,
            x = in(reg) x,
            y = in(reg) y,
            acc = in(reg) acc,
            options(pure, nomem, nostack),
        );
    }
    out
}

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

/// Bytes 0 and 2 of `x`, sign-extended into the low and high lanes (SXTB16).
#[inline(always)]
pub(crate) fn sxtb16(x: u32) -> u32 {
    let out: u32;
    // SAFETY: SXTB16 reads and writes registers only and leaves every flag alone.
    unsafe {
        asm!(
            "sxtb16 {out}, {x}",
            out = lateout(reg) out,
            x = in(reg) x,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// Bytes 1 and 3 of `x`, sign-extended into the low and high lanes (SXTB16, ROR #8).
#[inline(always)]
pub(crate) fn sxtb16_ror8(x: u32) -> u32 {
    let out: u32;
    // SAFETY: as `sxtb16`.
    unsafe {
        asm!(
            "sxtb16 {out}, {x}, ror #8",
            out = lateout(reg) out,
            x = in(reg) x,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// Bytes 0 and 2 of `x`, sign-extended, added lane by lane to `offsets` (SXTAB16; each
/// lane wraps at 16 bits).
#[inline(always)]
pub(crate) fn sxtab16(offsets: u32, x: u32) -> u32 {
    let out: u32;
    // SAFETY: SXTAB16 reads and writes registers only and leaves every flag alone.
    unsafe {
        asm!(
            "sxtab16 {out}, {o}, {x}",
            out = lateout(reg) out,
            o = in(reg) offsets,
            x = in(reg) x,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// Bytes 1 and 3 of `x`, sign-extended, added lane by lane to `offsets` (SXTAB16, ROR #8).
#[inline(always)]
pub(crate) fn sxtab16_ror8(offsets: u32, x: u32) -> u32 {
    let out: u32;
    // SAFETY: as `sxtab16`.
    unsafe {
        asm!(
            "sxtab16 {out}, {o}, {x}, ror #8",
            out = lateout(reg) out,
            o = in(reg) offsets,
            x = in(reg) x,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// `offset` in both lanes of a word.
#[inline(always)]
pub(crate) fn splat16(offset: i16) -> u32 {
    u32::from(offset as u16) * 0x0001_0001
}

/// The low lane of `x` as a signed value.
#[inline(always)]
pub(crate) fn lo(x: u32) -> i32 {
    i32::from(x as u16 as i16)
}
