//! Raw access to the bytes the device owns: the board's region and imported host memory.
//!
//! All of the driver's `unsafe` lives here. The invariant that makes it sound: a
//! [`RawSpan`] always lies inside memory the device borrowed for `'m` (exclusively for the
//! region and read-write imports, shared for read-only imports), and the device never holds a
//! Rust reference to that memory across calls — every slice made here lives no longer than
//! the `&self`/`&mut self` borrow of the device method that made it. Mappings borrow the
//! device mutably, so no other access can overlap them.

use crate::kernel::Binding;
use core::marker::PhantomData;
use core::sync::atomic::AtomicU8;

/// The board's memory region, as a base pointer the device keeps for `'m`.
pub(crate) struct Region<'m> {
    base: *mut u8,
    len: usize,
    memory: PhantomData<&'m mut [u8]>,
}

impl<'m> Region<'m> {
    pub(crate) fn new(memory: &'m mut [u8]) -> Self {
        Self {
            base: memory.as_mut_ptr(),
            len: memory.len(),
            memory: PhantomData,
        }
    }

    /// The address of the region's start (for alignment).
    pub(crate) fn base_addr(&self) -> usize {
        self.base as usize
    }

    /// `len` bytes at `offset`, or `None` if that leaves the region.
    pub(crate) fn span(&self, offset: u64, len: u64, writable: bool) -> Option<RawSpan> {
        let offset = usize::try_from(offset).ok()?;
        let len = usize::try_from(len).ok()?;
        if offset.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: `offset + len <= self.len`, so the result stays inside the region.
        let ptr = unsafe { self.base.add(offset) };
        Some(RawSpan { ptr, len, writable })
    }
}

/// Memory a caller imported: a pointer and length valid for `'m`.
#[derive(Clone, Copy)]
pub(crate) struct Imported {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

impl Imported {
    pub(crate) fn read_write(memory: &mut [u8]) -> Self {
        Self {
            ptr: memory.as_mut_ptr(),
            len: memory.len(),
            writable: true,
        }
    }

    pub(crate) fn read_only(memory: &[u8]) -> Self {
        Self {
            ptr: memory.as_ptr().cast_mut(),
            len: memory.len(),
            writable: false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn addr(&self) -> usize {
        self.ptr as usize
    }

    pub(crate) fn span(&self, offset: u64, len: u64) -> Option<RawSpan> {
        let offset = usize::try_from(offset).ok()?;
        let len = usize::try_from(len).ok()?;
        if offset.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: `offset + len <= self.len`: inside the imported memory.
        let ptr = unsafe { self.ptr.add(offset) };
        Some(RawSpan {
            ptr,
            len,
            writable: self.writable,
        })
    }
}

/// A checked range of device-owned memory.
#[derive(Clone, Copy)]
pub(crate) struct RawSpan {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

impl RawSpan {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The same span, read-only (a buffer whose access or usage forbids device writes).
    pub(crate) fn read_only(mut self) -> Self {
        self.writable = false;
        self
    }

    /// The bytes, for reading, for as long as the device borrow `'a` that made the span.
    pub(crate) fn bytes<'a>(&self) -> &'a [u8] {
        // SAFETY: the span is inside memory borrowed for 'm (module invariant); the caller
        // ties 'a to a borrow of the device, during which nothing writes the memory except
        // through this device's methods, which cannot run while 'a lives.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, writable; `None` for read-only memory.
    pub(crate) fn bytes_mut<'a>(&self) -> Option<&'a mut [u8]> {
        if !self.writable {
            return None;
        }
        // SAFETY: as `bytes`, and the memory is writable (region or read-write import). The
        // caller holds `&mut` on the device for 'a, so no other slice of it is alive.
        Some(unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// The span as a kernel binding: shared atomics if writable, plain bytes if read-only.
    pub(crate) fn binding<'a>(&self) -> Binding<'a> {
        if self.writable {
            // SAFETY: `AtomicU8` has the layout of `u8`; the memory is writable and, while
            // the dispatch borrows the device, reached only through these shared atomics.
            Binding::shared(unsafe {
                core::slice::from_raw_parts(self.ptr.cast::<AtomicU8>(), self.len)
            })
        } else {
            Binding::read_only(self.bytes())
        }
    }

    /// Copies `len` bytes from `source` into this span at `offset` (the ranges may overlap).
    /// Returns `false` (and copies nothing) if out of range or read-only.
    pub(crate) fn copy_from(
        &self,
        offset: usize,
        source: &RawSpan,
        source_offset: usize,
        len: usize,
    ) -> bool {
        let fits = offset.checked_add(len).is_some_and(|e| e <= self.len)
            && source_offset
                .checked_add(len)
                .is_some_and(|e| e <= source.len);
        if !fits || !self.writable {
            return false;
        }
        // SAFETY: both ranges were checked against their spans; `ptr::copy` allows overlap;
        // no reference to either range is alive during the copy (device methods only).
        unsafe { core::ptr::copy(source.ptr.add(source_offset), self.ptr.add(offset), len) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_stay_inside_their_memory() {
        let mut bytes = [0u8; 64];
        let region = Region::new(&mut bytes);
        assert!(region.span(60, 5, true).is_none());
        assert!(region.span(u64::MAX, 1, true).is_none());
        let a = region.span(0, 16, true).unwrap();
        let b = region.span(8, 16, true).unwrap();
        a.bytes_mut().unwrap().fill(7);
        assert!(b.copy_from(0, &a, 0, 16));
        assert_eq!(b.bytes()[..8], [7; 8]);
        assert!(!b.copy_from(1, &a, 0, 16), "past the end");
        let binding = a.binding();
        assert!(binding.store_u8(3, 9));
        assert_eq!(a.bytes()[3], 9);
        let ro = [1u8, 2, 3];
        let imported = Imported::read_only(&ro);
        let span = imported.span(1, 2).unwrap();
        assert_eq!(span.bytes(), &[2, 3]);
        assert!(span.bytes_mut().is_none());
        assert!(!span.binding().store_u8(0, 1));
        assert!(!span.copy_from(0, &a, 0, 1));
        assert!(imported.span(2, 2).is_none());
    }
}
