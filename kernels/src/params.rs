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

/// How a kernel uses one of its bindings: every driver checks a dispatch's bindings against
/// these (write access, alignment) and declares them so (a WGSL kernel's `read` or
/// `read_write` storage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingUse {
    /// Bytes per element the kernel reads or writes there: the binding must start at a
    /// multiple of it.
    pub element: u32,
    /// Whether the kernel writes it; it only reads every other binding.
    pub written: bool,
}

impl BindingUse {
    /// Read as bytes.
    pub const READ_8: Self = Self::read(1);
    /// Read as 32-bit elements.
    pub const READ_32: Self = Self::read(4);
    /// Written as bytes.
    pub const WRITE_8: Self = Self::write(1);
    /// Written as 16-bit elements.
    pub const WRITE_16: Self = Self::write(2);
    /// Written as 32-bit elements.
    pub const WRITE_32: Self = Self::write(4);

    /// Read as elements of `element` bytes.
    pub const fn read(element: u32) -> Self {
        Self {
            element,
            written: false,
        }
    }

    /// Written as elements of `element` bytes.
    pub const fn write(element: u32) -> Self {
        Self {
            element,
            written: true,
        }
    }
}

/// The bindings of a weighted int8 op (convolution, depthwise convolution, fully
/// connected): input, filter, bias, per-channel multipliers, per-channel shifts, output.
pub const WEIGHTED_S8_BINDINGS: &[BindingUse] = &[
    BindingUse::READ_8,
    BindingUse::READ_8,
    BindingUse::READ_32,
    BindingUse::READ_32,
    BindingUse::READ_32,
    BindingUse::WRITE_8,
];

/// The bindings of a weighted float op: input, filter, bias, output.
pub const WEIGHTED_F32_BINDINGS: &[BindingUse] = &[
    BindingUse::READ_32,
    BindingUse::READ_32,
    BindingUse::READ_32,
    BindingUse::WRITE_32,
];

/// The index in `P::BINDINGS` of the binding `P` writes (its last, with `OUTPUT_LAST`, the
/// dispatch's last); evaluated at compile time where a kernel table names it, so a
/// specification that writes no binding fails the build.
#[allow(
    clippy::panic,
    reason = "evaluated in constants: a specification that writes nothing fails the build"
)]
pub const fn written_binding<P: KernelParams>() -> usize {
    let bindings = P::BINDINGS;
    let mut index = 0;
    while index < bindings.len() {
        if bindings[index].written {
            return index;
        }
        index += 1;
    }
    panic!("a kernel's specification writes none of its bindings")
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

    /// The kernel's bindings in order: each one's element size and whether the kernel writes
    /// it. Exactly one is written: with [`OUTPUT_LAST`](Self::OUTPUT_LAST), the last.
    const BINDINGS: &'static [BindingUse];

    /// Whether the kernel binds a variable count of inputs, each as `BINDINGS[0]`, then its
    /// output, the dispatch's last binding, as `BINDINGS`' last (`BINDINGS` lists the most);
    /// otherwise it binds `BINDINGS`, in order.
    const OUTPUT_LAST: bool = false;

    /// Appends the parameters' words to `out`.
    fn encode(&self, out: &mut impl Extend<u32>);

    /// The parameters back from a dispatch's words.
    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError>;
}
