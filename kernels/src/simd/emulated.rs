//! The DSP instructions in plain Rust, bit for bit what Armv7E-M computes (the sticky Q
//! flag aside, which nothing reads): the tuned kernels' arithmetic on every other core.

/// The two signed 16-bit lanes of `x`, low first.
#[inline(always)]
fn lanes(x: u32) -> (i32, i32) {
    (
        i32::from(x as u16 as i16),
        i32::from((x >> 16) as u16 as i16),
    )
}

/// Two 16-bit lanes packed into a word, low first; each keeps its low 16 bits.
#[inline(always)]
fn pack(low: i32, high: i32) -> u32 {
    u32::from(low as u16) | (u32::from(high as u16) << 16)
}

/// `acc + x.lo * y.lo + x.hi * y.hi`, the sum wrapping (SMLAD).
#[inline(always)]
pub(crate) fn smlad(x: u32, y: u32, acc: i32) -> i32 {
    let ((x_lo, x_hi), (y_lo, y_hi)) = (lanes(x), lanes(y));
    acc.wrapping_add((x_lo * y_lo).wrapping_add(x_hi * y_hi))
}

/// `acc + x.lo * y.lo`, the sum wrapping (SMLABB).
#[inline(always)]
pub(crate) fn smlabb(x: u32, y: u32, acc: i32) -> i32 {
    acc.wrapping_add(lanes(x).0 * lanes(y).0)
}

/// `acc + x.hi * y.hi`, the sum wrapping (SMLATT).
#[inline(always)]
pub(crate) fn smlatt(x: u32, y: u32, acc: i32) -> i32 {
    acc.wrapping_add(lanes(x).1 * lanes(y).1)
}

/// `a * b` in 64 bits (SMULL).
#[inline(always)]
pub(crate) fn smull(a: i32, b: i32) -> i64 {
    i64::from(a) * i64::from(b)
}

/// Bytes 0 and 2 of `x`, sign-extended into the low and high lanes (SXTB16).
#[inline(always)]
pub(crate) fn sxtb16(x: u32) -> u32 {
    pack(i32::from(x as u8 as i8), i32::from((x >> 16) as u8 as i8))
}

/// Bytes 1 and 3 of `x`, sign-extended into the low and high lanes (SXTB16, ROR #8).
#[inline(always)]
pub(crate) fn sxtb16_ror8(x: u32) -> u32 {
    sxtb16(x.rotate_right(8))
}

/// Bytes 0 and 2 of `x`, sign-extended, added lane by lane to `offsets`, each lane
/// wrapping at 16 bits (SXTAB16).
#[inline(always)]
pub(crate) fn sxtab16(offsets: u32, x: u32) -> u32 {
    let ((offset_lo, offset_hi), (x_lo, x_hi)) = (lanes(offsets), lanes(sxtb16(x)));
    pack(offset_lo + x_lo, offset_hi + x_hi)
}

/// Bytes 1 and 3 of `x`, sign-extended, added lane by lane to `offsets` (SXTAB16, ROR #8).
#[inline(always)]
pub(crate) fn sxtab16_ror8(offsets: u32, x: u32) -> u32 {
    sxtab16(offsets, x.rotate_right(8))
}

/// [`clamp8`](super::armv7em::clamp8): each signed byte lane of `x` clamped to the same
/// lane's `[low, high]`.
pub(crate) fn clamp8(x: u32, low: u32, high: u32) -> u32 {
    let lane = |w: u32, k: u32| (w >> (8 * k)) as u8 as i8;
    (0..4).fold(0, |out, k| {
        let v = lane(x, k).max(lane(low, k)).min(lane(high, k));
        out | u32::from(v as u8) << (8 * k)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_split_sign_extend_and_wrap() {
        // Bytes [0x80, 0x7f, 0xff, 0x01]: -128, 127, -1, 1.
        let packed = u32::from_le_bytes([0x80, 0x7f, 0xff, 0x01]);
        assert_eq!(lanes(sxtb16(packed)), (-128, -1));
        assert_eq!(lanes(sxtb16_ror8(packed)), (127, 1));
        // Lanes wrap at 16 bits: 0x7fff + 1 is -0x8000.
        assert_eq!(lanes(sxtab16(pack(0x7fff, -3), 0x0000_0001)), (-0x8000, -3));
        assert_eq!(lanes(sxtab16_ror8(pack(5, 6), packed)), (132, 7));
        // The products' sum wraps: (-0x8000)² * 2 is 2^31.
        let min = pack(-0x8000, -0x8000);
        assert_eq!(smlad(min, min, 0), i32::MIN);
        assert_eq!(smlad(pack(3, -4), pack(5, 6), 10), 10 + 15 - 24);
        assert_eq!(smlabb(pack(3, -4), pack(5, 6), 1), 16);
        assert_eq!(smlatt(pack(3, -4), pack(5, 6), 1), -23);
        assert_eq!(smull(i32::MIN, i32::MIN), 1 << 62);
        // Each byte lane clamped on its own, signed: [-128, 127, -1, 1] to [-5, 0] (and
        // the last lane to [1, 1]).
        let low = u32::from_le_bytes([0xfb, 0xfb, 0xfb, 0x01]);
        let high = u32::from_le_bytes([0, 0, 0, 0x01]);
        assert_eq!(
            clamp8(packed, low, high).to_le_bytes(),
            [0xfb, 0, 0xff, 0x01]
        );
    }
}
