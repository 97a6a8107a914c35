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
use core::sync::atomic::AtomicU32;

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
        if self.base.is_null() {
            return None;
        }
        RawSpan::inside(self.base, self.len, offset, len, writable, true)
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
        // A read-only import is never viewed as atomics (see `RawSpan::atomic`).
        RawSpan::inside(
            self.ptr,
            self.len,
            offset,
            len,
            self.writable,
            self.writable,
        )
    }
}

/// A checked range of device-owned memory.
///
/// The slices it makes are unbounded in lifetime, so making one is `unsafe`: the caller ties
/// the slice to the borrow of the device that made the span, and holds a mutable slice only
/// under `&mut` on the device (no other slice of those bytes alive).
#[derive(Clone, Copy)]
pub(crate) struct RawSpan {
    ptr: *mut u8,
    len: usize,
    /// Whether the device may write these bytes (a read-only import or a buffer without
    /// write access may not).
    writable: bool,
    /// Whether the bytes may be viewed as atomics (device memory and read-write imports; a
    /// read-only import is shared memory the device must never view as mutable).
    atomic: bool,
}

impl RawSpan {
    /// No bytes: a placeholder for unused entries, never made into a slice (its pointer
    /// is dangling, valid only for a length of 0).
    #[cfg(feature = "exclusive")]
    pub(crate) const EMPTY: RawSpan = RawSpan {
        ptr: core::ptr::NonNull::dangling().as_ptr(),
        len: 0,
        writable: false,
        atomic: false,
    };

    /// Whether the device may write these bytes.
    #[cfg(feature = "exclusive")]
    pub(crate) fn is_writable(&self) -> bool {
        self.writable
    }

    /// Whether the two spans share a byte.
    #[cfg(feature = "exclusive")]
    pub(crate) fn overlaps(&self, other: &RawSpan) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        self.len != 0
            && other.len != 0
            && a < b.saturating_add(other.len)
            && b < a.saturating_add(self.len)
    }

    /// `len` bytes at `offset` of the `total` bytes at `base`, or `None` if that leaves them.
    fn inside(
        base: *mut u8,
        total: usize,
        offset: u64,
        len: u64,
        writable: bool,
        atomic: bool,
    ) -> Option<Self> {
        let offset = usize::try_from(offset).ok()?;
        let len = usize::try_from(len).ok()?;
        if offset.checked_add(len)? > total {
            return None;
        }
        // SAFETY: `offset + len <= total`, so the result stays inside the memory at `base`.
        let ptr = unsafe { base.add(offset) };
        Some(Self {
            ptr,
            len,
            writable,
            atomic,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The same span, read-only (a buffer whose access or usage forbids device writes).
    pub(crate) fn read_only(mut self) -> Self {
        self.writable = false;
        self
    }

    /// The bytes, for reading.
    ///
    /// # Safety
    /// For all of `'a` no mutable slice of these bytes may be alive and nothing may write
    /// them: callers bound `'a` by their borrow of the device.
    pub(crate) unsafe fn bytes<'a>(&self) -> &'a [u8] {
        // SAFETY: the span lies inside memory borrowed for 'm (module invariant); the
        // caller's contract excludes writers for 'a.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, writable; `None` for read-only memory.
    ///
    /// # Safety
    /// For all of `'a` no other slice or binding of these bytes may be alive: callers hold
    /// `&mut` on the device, or are inside a device method that makes no other view.
    pub(crate) unsafe fn bytes_mut<'a>(&self) -> Option<&'a mut [u8]> {
        if !self.writable {
            return None;
        }
        // SAFETY: as `bytes`; the memory is writable (region or read-write import) and the
        // caller's contract makes this the only view.
        Some(unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// The span as a kernel binding: 32-bit atomics over device memory (writable or not),
    /// plain bytes for a read-only import.
    ///
    /// # Safety
    /// For all of `'a` the bytes may be reached only through bindings made here (no plain
    /// slice of device memory alive): callers bound `'a` by one dispatch.
    pub(crate) unsafe fn binding<'a>(&self) -> Binding<'a> {
        if !self.atomic {
            // SAFETY: read-only import: nobody writes it (the device refuses, the caller
            // lent it shared for 'm).
            return Binding::read_only(unsafe { self.bytes() });
        }
        if self.ptr.align_offset(4) != 0 {
            return Binding::unaligned(self.ptr as usize, self.len, self.writable);
        }
        // SAFETY: `ptr` is 4-aligned and the `len / 4` words lie inside the span;
        // `AtomicU32` has the size and validity of `u32`; during 'a every access to these
        // bytes is a 32-bit atomic through bindings (caller's contract), so no access of
        // another size or kind races with them.
        let words =
            unsafe { core::slice::from_raw_parts(self.ptr.cast::<AtomicU32>(), self.len / 4) };
        Binding::words(words, self.len, self.writable)
    }

    /// Copies `len` bytes from `source` into this span at `offset` (the ranges may overlap).
    /// Returns `false` (and copies nothing) if out of range or read-only.
    ///
    /// # Safety
    /// No slice or binding of either range may be alive during the call.
    pub(crate) unsafe fn copy_from(
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
        // SAFETY: both ranges were checked against their spans, so the `add`s stay inside
        // them; the caller guarantees no reference to either range is alive.
        let (from, to) = unsafe { (source.ptr.add(source_offset), self.ptr.add(offset)) };
        let (f, t) = (from as usize, to as usize);
        if t + len <= f || f + len <= t {
            // SAFETY: in range (checked above), and the ranges are disjoint.
            unsafe { core::ptr::copy_nonoverlapping(from, to, len) };
        } else if t < f {
            // Overlapping, target below: forwards. Byte by byte rather than `ptr::copy`,
            // whose `memmove` would cost firmware 1.5 KB for this rare case.
            for i in 0..len {
                // SAFETY: `i < len` is inside both checked ranges; source byte `i` is read
                // before any write reaches it (writes trail reads, as `t < f`).
                unsafe { to.add(i).write(from.add(i).read()) };
            }
        } else {
            // Overlapping, target above: backwards, for the same reason.
            for i in (0..len).rev() {
                // SAFETY: as above, with writes trailing reads from the top down.
                unsafe { to.add(i).write(from.add(i).read()) };
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_stay_inside_their_memory() {
        let mut bytes = [0u32; 16];
        // SAFETY: reinterpreting 64 bytes of u32s as bytes.
        let bytes: &mut [u8] =
            unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), 64) };
        let region = Region::new(bytes);
        assert!(region.span(60, 5, true).is_none());
        assert!(region.span(u64::MAX, 1, true).is_none());
        let a = region.span(0, 16, true).unwrap();
        let b = region.span(8, 16, true).unwrap();
        // SAFETY: one view at a time, each dropped before the next.
        unsafe {
            a.bytes_mut().unwrap().fill(7);
            assert!(b.copy_from(0, &a, 0, 16));
            assert_eq!(b.bytes()[..8], [7; 8]);
            assert!(!b.copy_from(1, &a, 0, 16), "past the end");
            let binding = a.binding();
            binding.f32s(0).unwrap().set(0, 1.5);
            assert_eq!(binding.f32s(0).unwrap().get(0), 1.5);
            assert!(!a.read_only().binding().is_writable());
            assert!(matches!(
                region.span(1, 8, true).unwrap().binding().f32s(0),
                Err(crate::kernel::KernelError::Misaligned { .. })
            ));
        }
        let ro = [1u8, 2, 3];
        let imported = Imported::read_only(&ro);
        let span = imported.span(1, 2).unwrap();
        // SAFETY: only shared views of the read-only import.
        unsafe {
            assert_eq!(span.bytes(), &[2, 3]);
            assert!(span.bytes_mut().is_none());
            assert!(!span.binding().is_writable());
            assert!(!span.copy_from(0, &a, 0, 1));
        }
        assert!(imported.span(2, 2).is_none());
    }

    #[test]
    fn overlapping_copies_move_like_memmove() {
        let mut memory: [u8; 32] = core::array::from_fn(|i| i as u8);
        let region = Region::new(&mut memory);
        let whole = region.span(0, 32, true).unwrap();
        let at = |o: u64| region.span(o, 32 - o, true).unwrap();
        // SAFETY: one view at a time, each dropped before the next.
        unsafe {
            // Target above the source, overlapping: bytes 0..16 move to 4..20.
            assert!(at(4).copy_from(0, &whole, 0, 16));
            let expect: [u8; 20] =
                core::array::from_fn(|i| if i < 4 { i as u8 } else { i as u8 - 4 });
            assert_eq!(whole.bytes()[..20], expect);
            // Target below the source, overlapping: bytes 8..24 move to 2..18.
            let before: [u8; 32] = whole.bytes().try_into().unwrap();
            assert!(whole.copy_from(2, &at(8), 0, 16));
            assert_eq!(whole.bytes()[2..18], before[8..24]);
            // Disjoint, and onto itself.
            let now: [u8; 32] = whole.bytes().try_into().unwrap();
            assert!(whole.copy_from(24, &whole, 0, 8));
            assert_eq!(whole.bytes()[24..], now[..8]);
            let now: [u8; 32] = whole.bytes().try_into().unwrap();
            assert!(whole.copy_from(0, &whole, 0, 32));
            assert_eq!(whole.bytes(), now);
        }
    }
}
