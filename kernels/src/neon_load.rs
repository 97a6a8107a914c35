//! Vector loads of int8 values for the AArch64 NEON kernels, at any byte address. The
//! bare-metal target runs with strict alignment (`aarch64-unknown-none`: the MMU off, where
//! an unaligned access faults), so the compiler builds an unaligned vector load from single
//! bytes; LD1 of byte elements asks for byte alignment only, and is one instruction. Under
//! Miri, which runs no `asm!`, the intrinsics.

use core::arch::aarch64::{int8x16_t, int8x8_t};

/// The eight int8 values at `at`.
///
/// # Safety
/// `at` points to eight readable bytes.
#[inline(always)]
pub(crate) unsafe fn load8(at: *const i8) -> int8x8_t {
    #[cfg(not(miri))]
    {
        let values: int8x8_t;
        // SAFETY: the caller's; LD1 reads the eight bytes at `at` and writes only `values`.
        unsafe {
            core::arch::asm!(
                "ld1 {{{values:v}.8b}}, [{at}]",
                values = out(vreg) values,
                at = in(reg) at,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        values
    }
    #[cfg(miri)]
    // SAFETY: the caller's.
    unsafe {
        core::arch::aarch64::vld1_s8(at)
    }
}

/// The sixteen int8 values at `at`.
///
/// # Safety
/// `at` points to sixteen readable bytes.
#[inline(always)]
pub(crate) unsafe fn load16(at: *const i8) -> int8x16_t {
    #[cfg(not(miri))]
    {
        let values: int8x16_t;
        // SAFETY: the caller's; LD1 reads the sixteen bytes at `at` and writes only
        // `values`.
        unsafe {
            core::arch::asm!(
                "ld1 {{{values:v}.16b}}, [{at}]",
                values = out(vreg) values,
                at = in(reg) at,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        values
    }
    #[cfg(miri)]
    // SAFETY: the caller's.
    unsafe {
        core::arch::aarch64::vld1q_s8(at)
    }
}
