//! Test helpers: word buffers, aligned read-only bytes, a grid runner and a small RNG.

extern crate std;

use core::sync::atomic::{AtomicU32, Ordering};
use std::vec::Vec;

use crate::kernel::{Binding, Kernel, KernelError, Workgroup};

/// Grids every kernel test runs over: one workgroup, a row, a square, an uneven 3-D grid, and
/// one with more workgroups than most tests have elements.
pub(crate) const GRIDS: &[[u32; 3]] = &[[1, 1, 1], [3, 1, 1], [2, 2, 1], [3, 2, 2], [7, 5, 3]];

/// [`GRIDS`], or under Miri (which interprets every element's load and store) the one
/// workgroup, the uneven 3-D grid and the one with more workgroups than elements: the row and
/// the square split the work as the 3-D grid does.
pub(crate) fn grids() -> &'static [[u32; 3]] {
    if cfg!(miri) {
        &[[1, 1, 1], [3, 2, 2], [7, 5, 3]]
    } else {
        GRIDS
    }
}

/// Shared words holding `values`.
pub(crate) fn f32_words(values: &[f32]) -> Vec<AtomicU32> {
    values.iter().map(|v| AtomicU32::new(v.to_bits())).collect()
}

/// Shared words holding `values`.
pub(crate) fn u32_words(values: &[u32]) -> Vec<AtomicU32> {
    values.iter().map(|&v| AtomicU32::new(v)).collect()
}

/// `n` shared words, each holding `fill`.
pub(crate) fn filled(n: usize, fill: u32) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(fill)).collect()
}

/// The words' values as `f32`s.
pub(crate) fn read_f32(words: &[AtomicU32]) -> Vec<f32> {
    words
        .iter()
        .map(|w| f32::from_bits(w.load(Ordering::Relaxed)))
        .collect()
}

/// The words' values.
pub(crate) fn read_u32(words: &[AtomicU32]) -> Vec<u32> {
    words.iter().map(|w| w.load(Ordering::Relaxed)).collect()
}

/// 4-byte-aligned bytes for read-only bindings (a `Vec<u8>` is only 1-aligned, and Miri
/// means it).
#[repr(C, align(4))]
pub(crate) struct Aligned {
    bytes: [u8; 4096],
    len: usize,
}

impl Aligned {
    /// The native-endian bytes of `values`.
    pub(crate) fn of_f32(values: &[f32]) -> std::boxed::Box<Self> {
        let mut out = std::boxed::Box::new(Self {
            bytes: [0; 4096],
            len: values.len() * 4,
        });
        for (chunk, v) in out.bytes.chunks_exact_mut(4).zip(values) {
            chunk.copy_from_slice(&v.to_ne_bytes());
        }
        out
    }

    /// The bytes, aligned.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The bytes shifted by one, so misaligned.
    pub(crate) fn misaligned(&self) -> &[u8] {
        &self.bytes[1..self.len + 1]
    }
}

/// Runs `kernel` for every workgroup of `count`, checks every workgroup gave the same result,
/// and returns it.
pub(crate) fn run(
    kernel: &Kernel,
    count: [u32; 3],
    constants: &[u32],
    bindings: &[Binding<'_>],
) -> Result<(), KernelError> {
    let mut first = None;
    for z in 0..count[2] {
        for y in 0..count[1] {
            for x in 0..count[0] {
                let wg = Workgroup {
                    id: [x, y, z],
                    count,
                    constants,
                    bindings,
                };
                let entry = kernel.shared().expect("a shared-binding kernel");
                let result = entry(&wg);
                match first {
                    None => first = Some(result),
                    Some(f) => assert_eq!(f, result, "workgroups disagree ({})", kernel.name),
                }
            }
        }
    }
    first.unwrap_or(Ok(()))
}

/// A deterministic xorshift generator.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value uniform in `[lo, hi)`.
    pub(crate) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// `n` values uniform in `[lo, hi)`.
    pub(crate) fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.range(lo, hi)).collect()
    }
}
