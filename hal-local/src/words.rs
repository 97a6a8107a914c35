//! [`Words`]: shared 32-bit words of device memory, the element store of a kernel binding.

use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::AtomicU32;

/// `len` shared 32-bit words, borrowed for `'a` as a `&'a [AtomicU32]` is, and reached one
/// `&AtomicU32` at a time.
///
/// Natively it is that slice. It keeps a base pointer instead because Stacked Borrows (Miri)
/// retags a slice of cells cell by cell wherever it is passed: every element read through
/// `&[AtomicU32]` would cost the slice's length, where through `Words` it costs one word.
#[derive(Clone, Copy)]
pub struct Words<'a> {
    /// Start of the words; valid for `len` of them for `'a` (taken from a slice).
    base: NonNull<AtomicU32>,
    len: usize,
    words: PhantomData<&'a [AtomicU32]>,
}

// SAFETY: `Words` is a `&'a [AtomicU32]` by another name (it only ever hands out
// `&'a AtomicU32`s into the slice it was made from), and that slice is `Send` and `Sync`.
unsafe impl Send for Words<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for Words<'_> {}

impl<'a> Words<'a> {
    /// The words of `slice`.
    pub fn new(slice: &'a [AtomicU32]) -> Self {
        Self {
            base: NonNull::from(slice).cast(),
            len: slice.len(),
            words: PhantomData,
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Word `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a AtomicU32> {
        if i >= self.len {
            return None;
        }
        // SAFETY: `base` and `len` came from a `&'a [AtomicU32]` (`new`, `prefix`), so word
        // `i < len` is an `AtomicU32` alive and shared for `'a`, and the pointer carries the
        // whole slice's provenance.
        Some(unsafe { &*self.base.as_ptr().add(i) })
    }

    /// The first `n` words (all of them if there are fewer).
    pub fn prefix(self, n: usize) -> Self {
        Self {
            len: self.len.min(n),
            ..self
        }
    }

    /// The address of the first word.
    pub fn addr(&self) -> usize {
        self.base.as_ptr() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::Ordering;

    /// Miri runs this: words are read and written through the base pointer, within the
    /// slice and no further.
    #[test]
    fn words_reach_exactly_their_slice() {
        let cells: [AtomicU32; 4] = core::array::from_fn(|i| AtomicU32::new(i as u32));
        let words = Words::new(&cells);
        assert_eq!(words.len(), 4);
        assert_eq!(words.addr(), cells.as_ptr() as usize);
        words.get(3).unwrap().store(30, Ordering::Relaxed);
        assert_eq!(cells[3].load(Ordering::Relaxed), 30);
        assert!(words.get(4).is_none());
        let front = words.prefix(2);
        assert_eq!(front.len(), 2);
        assert_eq!(front.get(1).unwrap().load(Ordering::Relaxed), 1);
        assert!(front.get(2).is_none());
        assert_eq!(words.prefix(9).len(), 4);
        assert!(Words::new(&[]).is_empty());
        fn shareable<T: Send + Sync>(_: &T) {}
        shareable(&words);
    }
}
