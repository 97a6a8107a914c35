//! Chunked buffers: one logical buffer over several allocations of at most
//! `max_allocation_size` bytes each (seed 000).
//!
//! Every chunk but the last holds exactly `chunk_size` bytes, so byte `i` of the buffer is at
//! `i % chunk_size` in chunk `i / chunk_size`. [`ChunkLayout::segments`] cuts any range of the
//! buffer into per-chunk pieces; fills, copies, reads and writes walk those pieces, so crossing
//! a chunk boundary is handled once, here, for every driver.

use crate::Error;

/// How a buffer of `size` bytes is cut into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    size: u64,
    /// Never zero.
    chunk_size: u64,
}

/// One piece of a range: where it is in a chunk and in the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Which chunk.
    pub chunk: u64,
    /// Offset inside that chunk.
    pub chunk_offset: u64,
    /// Offset from the start of the range.
    pub range_offset: u64,
    /// Bytes in this piece.
    pub length: u64,
}

impl ChunkLayout {
    /// A layout for `size` bytes in chunks of at most `max_chunk` bytes that are multiples of
    /// `alignment` (so each chunk's start keeps the buffer's alignment).
    pub fn new(size: u64, max_chunk: u64, alignment: u64) -> Result<Self, Error> {
        if !alignment.is_power_of_two() || max_chunk < alignment {
            return Err(Error::InvalidArgument(
                "chunk size must be at least one alignment unit",
            ));
        }
        let chunk_size = if size <= max_chunk {
            size.max(1)
        } else {
            // `alignment` is a power of two: rounding down is a mask.
            max_chunk & !(alignment - 1)
        };
        Ok(Self { size, chunk_size })
    }

    /// The layout of a buffer already cut into chunks of `chunk_size` (0 is taken as one
    /// chunk holding everything).
    pub const fn of(size: u64, chunk_size: u64) -> Self {
        let chunk_size = if chunk_size == 0 { size } else { chunk_size };
        Self {
            size,
            chunk_size: if chunk_size == 0 { 1 } else { chunk_size },
        }
    }

    /// Bytes in the buffer.
    pub const fn size(&self) -> u64 {
        self.size
    }

    /// Bytes per chunk (the last may hold fewer); never zero.
    pub const fn chunk_size(&self) -> u64 {
        self.chunk_size
    }

    /// How many chunks.
    pub const fn count(&self) -> u64 {
        if self.size <= self.chunk_size {
            1
        } else {
            let (whole, rest) = div_rem(self.size, self.chunk_size);
            whole + (rest != 0) as u64
        }
    }

    /// Bytes in chunk `index`.
    pub const fn chunk_len(&self, index: u64) -> u64 {
        let start = index.saturating_mul(self.chunk_size);
        let end = start.saturating_add(self.chunk_size);
        if end > self.size {
            self.size.saturating_sub(start)
        } else {
            self.chunk_size
        }
    }

    /// The pieces of `offset..offset + length`, in order (a range past `u64::MAX` is cut
    /// there). The caller checks the range is inside the buffer first.
    pub fn segments(&self, offset: u64, length: u64) -> Segments {
        Segments {
            chunk_size: self.chunk_size,
            start: offset,
            done: 0,
            length: length.min(u64::MAX - offset),
        }
    }

    /// Whether `offset..offset + length` lies in one chunk (an error naming the range if not).
    pub fn within_one_chunk(&self, offset: u64, length: u64) -> Result<Segment, Error> {
        let mut pieces = self.segments(offset, length);
        let first = pieces.next().unwrap_or_else(|| {
            let (chunk, chunk_offset) = div_rem(offset, self.chunk_size);
            Segment {
                chunk,
                chunk_offset,
                range_offset: 0,
                length: 0,
            }
        });
        if pieces.next().is_some() {
            return Err(Error::CrossesChunks {
                offset,
                length,
                chunk_size: self.chunk_size,
            });
        }
        Ok(first)
    }
}

/// Iterator over the per-chunk pieces of a range.
#[derive(Debug, Clone)]
pub struct Segments {
    chunk_size: u64,
    start: u64,
    done: u64,
    length: u64,
}

impl Iterator for Segments {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        if self.done >= self.length {
            return None;
        }
        let at = self.start + self.done;
        let (chunk, chunk_offset) = div_rem(at, self.chunk_size);
        let length = (self.chunk_size - chunk_offset).min(self.length - self.done);
        let segment = Segment {
            chunk,
            chunk_offset,
            range_offset: self.done,
            length,
        };
        self.done += length;
        Some(segment)
    }
}

/// `(a / b, a % b)`, for `b > 0` (a zero `b` gives `(u64::MAX, a)` rather than a panic).
///
/// On a 32-bit target a `u64` `/` or `%` links the 64-bit division routine (about 1 KiB of
/// flash on Cortex-M). This divides with the CPU's 32-bit divide when both operands fit 32
/// bits, as every offset in a microcontroller's memory does, and bit by bit otherwise. On
/// 64-bit targets it is the native division.
#[inline]
pub const fn div_rem(a: u64, b: u64) -> (u64, u64) {
    if b == 0 {
        return (u64::MAX, a);
    }
    #[cfg(target_pointer_width = "64")]
    {
        (a / b, a % b)
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        if a <= u32::MAX as u64 && b <= u32::MAX as u64 {
            let (a, b) = (a as u32, b as u32);
            ((a / b) as u64, (a % b) as u64)
        } else {
            div_rem_bitwise(a, b)
        }
    }
}

/// Shift-and-subtract division for `b > 0`: one quotient bit per step, no division routine.
#[cfg(any(test, not(target_pointer_width = "64")))]
#[inline(never)]
const fn div_rem_bitwise(a: u64, b: u64) -> (u64, u64) {
    let (mut quotient, mut rest) = (0u64, 0u64);
    let mut bit = 64;
    while bit > 0 {
        bit -= 1;
        // The remainder is below `b`; doubled it may pass 64 bits, and is then above `b`.
        let carry = rest >> 63 != 0;
        rest = (rest << 1) | ((a >> bit) & 1);
        if carry || rest >= b {
            rest = rest.wrapping_sub(b);
            quotient |= 1 << bit;
        }
    }
    (quotient, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_matches_the_native_one() {
        let values = [
            0,
            1,
            2,
            3,
            7,
            16,
            255,
            1000,
            4096,
            u32::MAX as u64 - 1,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            (1 << 40) + 12_345,
            u64::MAX / 3,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &a in &values {
            for &b in values.iter().filter(|&&b| b > 0) {
                assert_eq!(div_rem(a, b), (a / b, a % b), "{a} / {b}");
                assert_eq!(div_rem_bitwise(a, b), (a / b, a % b), "{a} / {b}");
            }
            assert_eq!(div_rem(a, 0), (u64::MAX, a));
        }
    }

    #[test]
    fn segments_cover_the_range_once() {
        let layout = ChunkLayout::new(1000, 256, 64).unwrap();
        assert_eq!(layout.chunk_size(), 256);
        assert_eq!(
            layout.within_one_chunk(u64::MAX, 2).map(|s| s.length),
            Ok(0)
        );
        assert_eq!(layout.chunk_len(u64::MAX), 0);
        assert_eq!(ChunkLayout::of(10, 0).count(), 1);
        assert_eq!(ChunkLayout::of(0, 0).chunk_size(), 1);
        assert_eq!(layout.count(), 4);
        assert_eq!(layout.chunk_len(3), 1000 - 768);
        let pieces: [Segment; 3] = {
            let mut it = layout.segments(200, 400);
            [it.next().unwrap(), it.next().unwrap(), it.next().unwrap()]
        };
        assert_eq!(
            pieces[0],
            Segment {
                chunk: 0,
                chunk_offset: 200,
                range_offset: 0,
                length: 56
            }
        );
        assert_eq!(
            pieces[1],
            Segment {
                chunk: 1,
                chunk_offset: 0,
                range_offset: 56,
                length: 256
            }
        );
        assert_eq!(
            pieces[2],
            Segment {
                chunk: 2,
                chunk_offset: 0,
                range_offset: 312,
                length: 88
            }
        );
        assert_eq!(layout.segments(200, 400).count(), 3);
        assert_eq!(layout.segments(5, 0).count(), 0);
        assert!(layout.within_one_chunk(250, 10).is_err());
        assert_eq!(layout.within_one_chunk(256, 256).unwrap().chunk, 1);
    }

    #[test]
    fn chunks_keep_alignment() {
        let layout = ChunkLayout::new(1 << 20, 1000, 64).unwrap();
        assert_eq!(layout.chunk_size(), 960);
        assert!(ChunkLayout::new(10, 32, 64).is_err());
        assert_eq!(ChunkLayout::new(10, 64, 64).unwrap().count(), 1);
        assert_eq!(ChunkLayout::new(0, 64, 64).unwrap().count(), 1);
    }
}
