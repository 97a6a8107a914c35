//! A kernel's parameters as push-constant words: written by the importer, read back by every
//! driver, so the two can never disagree on the layout.

use hal_core::kernel::KernelError;

/// Push-constant words in order, with a cursor for reading them back.
#[derive(Debug, Clone, Copy)]
pub struct Words<'a> {
    words: &'a [u32],
    at: usize,
}

impl<'a> Words<'a> {
    /// A reader over `words`.
    pub const fn new(words: &'a [u32]) -> Self {
        Self { words, at: 0 }
    }

    /// The next word.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, KernelError> {
        let word = self
            .words
            .get(self.at)
            .copied()
            .ok_or(KernelError::MissingConstants {
                needed: self.at as u32 + 1,
                given: self.words.len() as u32,
            })?;
        self.at += 1;
        Ok(word)
    }

    /// The next word as an `i32` (two's complement).
    #[inline]
    pub fn i32(&mut self) -> Result<i32, KernelError> {
        Ok(self.u32()? as i32)
    }

    /// The next word as a `usize`.
    #[inline]
    pub fn usize(&mut self) -> Result<usize, KernelError> {
        Ok(self.u32()? as usize)
    }

    /// The next word as an `f32` (its bits).
    #[inline]
    pub fn f32(&mut self) -> Result<f32, KernelError> {
        Ok(f32::from_bits(self.u32()?))
    }

    /// Words not read yet.
    pub fn rest(&self) -> &'a [u32] {
        self.words.get(self.at..).unwrap_or(&[])
    }
}

/// A kernel's parameters: the words a dispatch carries as push constants.
///
/// `decode(encode(p)) == p` for every valid `p`; `decode` refuses words that describe
/// shapes no kernel could run (a zero stride, a count that overflows), so a driver that
/// decoded parameters may index with them after checking its bindings' lengths against
/// them.
pub trait KernelParams: Sized {
    /// The kernel's name, as modules name it.
    const KERNEL: &'static str;

    /// Appends the parameters' words to `out`.
    fn encode(&self, out: &mut impl Extend<u32>);

    /// The parameters back from a dispatch's words.
    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError>;
}
