//! The Armv7E-M DSP instructions the tuned kernels are built from, each a safe function
//! over plain integers: `asm!` on registers only (no memory, no stack) where the build
//! script sets `ember_dsp`, elsewhere the same arithmetic in plain Rust, so the tuned
//! kernels also build and are checked against the portable ones on the host (and under
//! Miri).
//!
//! A word holds two signed 16-bit lanes, low half first. [`sxtb16`] and [`sxtb16_ror8`]
//! split four packed int8 values `[b0, b1, b2, b3]` (little-endian) into the lanes
//! `(b0, b2)` and `(b1, b3)`; [`smlad`] adds both lanes' products to an accumulator. A dot
//! product over four int8 pairs is thus two `smlad`s over the split words, its products
//! taken in the order `b0, b2, b1, b3`: int32 sums wrap (as TFLM's do), so the order
//! leaves the result bit for bit the same.

#[cfg(ember_dsp)]
mod armv7em;
#[cfg(not(ember_dsp))]
mod emulated;

#[cfg(ember_dsp)]
pub(crate) use armv7em::*;
#[cfg(not(ember_dsp))]
pub(crate) use emulated::*;

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
