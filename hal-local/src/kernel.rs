//! The kernel ABI: what a dispatch hands a kernel for each workgroup.
//!
//! A kernel is a plain `fn` in a static table linked into the program (IREE's "static library
//! loader"). The driver calls it once per workgroup with the workgroup's id and the grid's
//! count, the dispatch's push constants, and one [`Binding`] per bound buffer range.
//!
//! Workgroups of one dispatch may run at once on several threads (the `threads` feature) and
//! may write the same binding, so bindings are views of *shared* memory: elements are read and
//! written one 32-bit word at a time through atomics with relaxed ordering (they compile to
//! plain loads and stores on every target Ember supports, and unlike plain accesses they are
//! defined behaviour when workgroups share memory). Kernels that want speed copy a block into locals, compute, and store
//! the block back. The contract every kernel keeps: workgroups write disjoint elements.

use core::sync::atomic::{AtomicU32, Ordering};
#[cfg(feature = "exclusive")]
use hal_core::command::MAX_BINDINGS;

use hal_core::contract::{BindingFacts, Facts};

use crate::words::Words;

/// A kernel's entry point over shared bindings: called once per workgroup, workgroups
/// perhaps at once on several threads.
pub type KernelFn = fn(&Workgroup<'_>) -> Result<(), KernelError>;

#[cfg(feature = "exclusive")]
/// A kernel's entry point over plain byte slices ([`Exclusive`]): called once per
/// workgroup, every workgroup of a dispatch in turn on the submitting thread; the kernel
/// may cut its output into tiles that run on the worker pool ([`Tiler`]).
pub type ExclusiveFn = fn(&mut Exclusive<'_, '_>) -> Result<(), KernelError>;

/// How the driver calls a kernel.
#[derive(Clone, Copy)]
pub enum Entry {
    /// Over shared bindings ([`Workgroup`]): workgroups may run on the worker pool.
    Shared(KernelFn),
    /// Over plain slices ([`Exclusive`]; feature `exclusive`): the compiler sees ordinary
    /// memory and vectorizes the inner loops; workgroups run one after another on one
    /// thread, and output tiles may run on the worker pool ([`Tiler`]). The kernel writes
    /// the one binding [`Writes`] names, and only if it overlaps no other binding of the
    /// dispatch (so it cannot work in place); every other binding is read-only to it.
    #[cfg(feature = "exclusive")]
    Exclusive(ExclusiveFn, Writes),
}

#[cfg(feature = "exclusive")]
/// The binding an [`Entry::Exclusive`] kernel writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Binding `n`.
    Binding(u8),
    /// The dispatch's last binding (a kernel with a variable count of inputs).
    Last,
}

#[cfg(feature = "exclusive")]
impl Writes {
    /// The binding a kernel of `P`'s specification writes (`ember_kernels::KernelParams`'
    /// `BINDINGS` and `OUTPUT_LAST`); a specification that writes none fails the build of
    /// the table that names it.
    pub const fn of<P: ember_kernels::KernelParams>() -> Self {
        if P::OUTPUT_LAST {
            Writes::Last
        } else {
            Writes::Binding(ember_kernels::written_binding::<P>() as u8)
        }
    }
}

/// One entry of a kernel table.
#[derive(Clone, Copy)]
pub struct Kernel {
    /// The name modules and callers use to find the kernel.
    pub name: &'static str,
    /// The entry point.
    pub entry: Entry,
}

#[cfg(feature = "exclusive")]
/// What one workgroup of an [`Entry::Exclusive`] kernel's dispatch sees: its bindings as
/// plain slices, each read-only or the only view of its bytes.
pub struct Exclusive<'w, 'b> {
    /// This workgroup's id, each coordinate below `count`'s.
    pub id: [u32; 3],
    /// The grid of workgroups in the dispatch.
    pub count: [u32; 3],
    /// The dispatch's push constants.
    pub constants: &'w [u32],
    /// The dispatch's bindings, in order.
    pub bindings: &'w mut [Bytes<'b>],
    /// Scratch the caller lends the kernel for this workgroup (16-byte aligned), or empty:
    /// a static program plans it in its arena where a kernel asks for it
    /// ([`kernels::tflite::scratch_bytes`](crate::kernels)); a kernel given none uses
    /// its stack.
    pub scratch: &'w mut [u8],
    /// Where the kernel's output tiles run.
    pub tiler: Tiler<'w>,
}

#[cfg(feature = "exclusive")]
/// Where an exclusive kernel's output tiles run: on the device's workers (a std pool with
/// `threads`, a team of cores with `cores`), otherwise all at once on the submitting
/// thread. Tiles are disjoint `&mut` pieces of the output, so a kernel runs them at once in
/// safe code.
#[derive(Clone, Copy)]
pub struct Tiler<'w> {
    #[cfg(feature = "parallel")]
    workers: Option<&'w dyn crate::workers::Workers>,
    #[cfg(not(feature = "parallel"))]
    inline: core::marker::PhantomData<&'w ()>,
}

#[cfg(feature = "exclusive")]
impl<'w> Tiler<'w> {
    /// Everything on the submitting thread.
    pub const INLINE: Tiler<'static> = Tiler {
        #[cfg(feature = "parallel")]
        workers: None,
        #[cfg(not(feature = "parallel"))]
        inline: core::marker::PhantomData,
    };

    #[cfg(feature = "parallel")]
    pub(crate) fn new(workers: Option<&'w dyn crate::workers::Workers>) -> Self {
        Self { workers }
    }

    /// Calls `run(rows, tile)` over `output`, which holds `rows` rows of `row_len`
    /// elements: on the workers, the rows cut into tiles of whole rows and the tiles
    /// run at once (an error from any tile is the result); otherwise once,
    /// `run(0..rows, output)`, the whole output as given.
    pub fn run<T: Send>(
        self,
        output: &mut [T],
        rows: usize,
        row_len: usize,
        run: impl Fn(core::ops::Range<usize>, &mut [T]) -> Result<(), KernelError> + Sync,
    ) -> Result<(), KernelError> {
        #[cfg(feature = "parallel")]
        if let Some(workers) = self.workers {
            if rows > 1 && row_len > 0 {
                return crate::workers::tiles(workers, output, rows, row_len, &run);
            }
        }
        let _ = row_len;
        run(0..rows, output)
    }
}

#[cfg(feature = "exclusive")]
impl Exclusive<'_, '_> {
    /// Each binding's length in bytes, in order (for a kernel contract's checks).
    #[inline]
    pub fn lens(&self) -> BindingLens {
        let mut lens = [0; MAX_BINDINGS];
        for (len, binding) in lens.iter_mut().zip(self.bindings.iter()) {
            *len = binding.len();
        }
        BindingLens {
            lens,
            count: self.bindings.len().min(MAX_BINDINGS),
        }
    }
}

#[cfg(feature = "exclusive")]
/// The lengths of a dispatch's bindings in bytes, in order: a slice by `Deref`. A plain
/// array and count, so filling it keeps the count in a register.
#[derive(Debug, Clone, Copy)]
pub struct BindingLens {
    lens: [usize; MAX_BINDINGS],
    count: usize,
}

#[cfg(feature = "exclusive")]
impl core::ops::Deref for BindingLens {
    type Target = [usize];

    #[inline]
    fn deref(&self) -> &[usize] {
        &self.lens[..self.count]
    }
}

#[cfg(feature = "exclusive")]
/// One binding of an [`Exclusive`] dispatch.
pub enum Bytes<'a> {
    /// Bytes the kernel may only read (a read-only buffer, or one the dispatch may not
    /// write).
    Read(&'a [u8]),
    /// Bytes the kernel may read and write; no other binding of the dispatch overlaps them.
    Write(&'a mut [u8]),
}

#[cfg(feature = "exclusive")]
impl<'a> Bytes<'a> {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Bytes::Read(b) => b.len(),
            Bytes::Write(b) => b.len(),
        }
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes, to read.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Bytes::Read(b) => b,
            Bytes::Write(b) => b,
        }
    }

    /// The bytes, to write; `index` names the binding in the error if it is read-only.
    pub fn bytes_mut(&mut self, index: u32) -> Result<&mut [u8], KernelError> {
        match self {
            Bytes::Read(_) => Err(KernelError::ReadOnly { index }),
            Bytes::Write(b) => Ok(b),
        }
    }
}

#[cfg(feature = "exclusive")]
/// Plain numbers a binding's bytes can be read and written as: every bit pattern is a
/// valid value and there is no padding.
pub trait Element: Copy + private::Sealed {}
#[cfg(feature = "exclusive")]
impl Element for i8 {}
#[cfg(feature = "exclusive")]
impl Element for u8 {}
#[cfg(feature = "exclusive")]
impl Element for i16 {}
#[cfg(feature = "exclusive")]
impl Element for i32 {}
#[cfg(feature = "exclusive")]
impl Element for u32 {}
#[cfg(feature = "exclusive")]
impl Element for f32 {}
#[cfg(feature = "exclusive")]
impl Element for [u32; 4] {}

#[cfg(feature = "exclusive")]
mod private {
    pub trait Sealed {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
    impl Sealed for i16 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
    impl Sealed for [u32; 4] {}
}

#[cfg(feature = "exclusive")]
/// `bytes` as elements of `T`: the whole elements it holds; an error naming binding
/// `index` if its start is not aligned for `T`.
pub fn elements<T: Element>(bytes: &[u8], index: u32) -> Result<&[T], KernelError> {
    let size = core::mem::size_of::<T>();
    if bytes.as_ptr().align_offset(core::mem::align_of::<T>()) != 0 {
        return Err(KernelError::Misaligned {
            index,
            alignment: core::mem::align_of::<T>() as u32,
        });
    }
    // SAFETY: the start is aligned for `T` (checked), `len / size` elements lie inside
    // `bytes`, `T` has no padding and every bit pattern is a valid `T` (`Element`), and the
    // result borrows `bytes`, so it reads nothing that is not there and outlives nothing.
    Ok(unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) })
}

#[cfg(feature = "exclusive")]
/// [`elements`], to write.
pub fn elements_mut<T: Element>(bytes: &mut [u8], index: u32) -> Result<&mut [T], KernelError> {
    let size = core::mem::size_of::<T>();
    if bytes.as_ptr().align_offset(core::mem::align_of::<T>()) != 0 {
        return Err(KernelError::Misaligned {
            index,
            alignment: core::mem::align_of::<T>() as u32,
        });
    }
    // SAFETY: as in `elements`; the result borrows `bytes` mutably, so it is the only view,
    // and any `T` written is valid bytes.
    Ok(unsafe {
        core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / size)
    })
}

impl Kernel {
    /// Its entry over shared bindings, if it has that kind.
    pub fn shared(&self) -> Option<KernelFn> {
        match self.entry {
            Entry::Shared(entry) => Some(entry),
            #[cfg(feature = "exclusive")]
            Entry::Exclusive(..) => None,
        }
    }
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).finish()
    }
}

pub use hal_core::kernel::KernelError;

/// What one workgroup of a dispatch sees.
pub struct Workgroup<'a> {
    /// This workgroup's id, each coordinate below `count`'s.
    pub id: [u32; 3],
    /// The grid of workgroups in the dispatch.
    pub count: [u32; 3],
    /// The dispatch's push constants.
    pub constants: &'a [u32],
    /// The dispatch's bindings, in order.
    pub bindings: &'a [Binding<'a>],
}

impl<'a> Workgroup<'a> {
    /// Push constant `index`, or an error naming how many the kernel needs.
    pub fn constant(&self, index: usize) -> Result<u32, KernelError> {
        self.constants
            .get(index)
            .copied()
            .ok_or(KernelError::MissingConstants {
                needed: index as u32 + 1,
                given: self.constants.len() as u32,
            })
    }

    /// Binding `index`, or an error.
    pub fn binding(&self, index: usize) -> Result<&Binding<'a>, KernelError> {
        self.bindings.get(index).ok_or(KernelError::MissingBinding {
            index: index as u32,
            bound: self.bindings.len() as u32,
        })
    }

    /// Binding `index` read as `f32`s.
    pub fn input_f32(&self, index: usize) -> Result<F32s<'a>, KernelError> {
        self.binding(index)?.f32s(index as u32)
    }

    /// Binding `index` written as `f32`s (an error if the buffer is read-only).
    pub fn output_f32(&self, index: usize) -> Result<F32s<'a>, KernelError> {
        let binding = self.binding(index)?;
        if !binding.is_writable() {
            return Err(KernelError::ReadOnly {
                index: index as u32,
            });
        }
        binding.f32s(index as u32)
    }

    /// The linear id of this workgroup (x fastest) and the total count.
    pub fn linear(&self) -> (u64, u64) {
        let [x, y, z] = self.id.map(u64::from);
        let [cx, cy, cz] = self.count.map(u64::from);
        (x + cx * (y + cy * z), cx * cy * cz)
    }

    /// The slice of `0..n` this workgroup owns when `n` items are split evenly across all
    /// workgroups in linear order. Workgroups' slices are disjoint and cover `0..n`.
    pub fn share_of(&self, n: u64) -> core::ops::Range<u64> {
        let (index, total) = self.linear();
        let (whole, rest) = hal_core::chunk::div_rem(n, total.max(1));
        let per = whole + (rest != 0) as u64;
        let start = index.saturating_mul(per).min(n);
        start..start.saturating_add(per).min(n)
    }
}

/// Memory one binding refers to: `len` bytes of device memory, read (and written, unless the
/// buffer forbids it) one 32-bit word at a time, or read-only bytes.
///
/// Every access to shared device memory is a 32-bit atomic: mixing access sizes on memory
/// other threads touch is undefined behaviour in Rust's memory model, so bindings offer no
/// byte access.
#[derive(Clone, Copy)]
pub struct Binding<'a> {
    bytes: BindingBytes<'a>,
}

#[derive(Clone, Copy)]
enum BindingBytes<'a> {
    /// 4-byte-aligned device memory: `len` bytes, of which the whole words are reachable.
    Shared {
        words: Words<'a>,
        len: usize,
        writable: bool,
    },
    /// Device memory at address `start`, not 4-byte aligned: no element view is possible.
    Unaligned {
        start: usize,
        len: usize,
        writable: bool,
    },
    /// Read-only memory (imported constants): nobody writes it while it is bound.
    ReadOnly(&'a [u8]),
}

impl<'a> Binding<'a> {
    /// A writable binding over shared words (`4 * words.len()` bytes).
    pub fn shared_words(words: &'a [AtomicU32]) -> Self {
        Self::words(words, words.len() * 4, true)
    }

    /// A binding over shared words holding `len` bytes (a trailing partial word is part of
    /// the length but not reachable); `len` is clamped to the words given.
    pub fn words(words: &'a [AtomicU32], len: usize, writable: bool) -> Self {
        Self {
            bytes: BindingBytes::Shared {
                words: Words::new(words),
                len: len.min(words.len() * 4),
                writable,
            },
        }
    }

    /// A binding of `len` bytes of device memory at address `start`, which is not on a
    /// 4-byte boundary.
    pub fn unaligned(start: usize, len: usize, writable: bool) -> Self {
        Self {
            bytes: BindingBytes::Unaligned {
                start,
                len,
                writable,
            },
        }
    }

    /// A read-only binding.
    pub fn read_only(bytes: &'a [u8]) -> Self {
        Self {
            bytes: BindingBytes::ReadOnly(bytes),
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self.bytes {
            BindingBytes::Shared { len, .. } | BindingBytes::Unaligned { len, .. } => len,
            BindingBytes::ReadOnly(b) => b.len(),
        }
    }

    /// Whether the binding is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether kernels may write it.
    pub fn is_writable(&self) -> bool {
        matches!(
            self.bytes,
            BindingBytes::Shared { writable: true, .. }
                | BindingBytes::Unaligned { writable: true, .. }
        )
    }

    /// The binding as `f32` elements; `index` names it in errors. Its start must be 4-byte
    /// aligned; a trailing partial element is ignored.
    pub fn f32s(&self, index: u32) -> Result<F32s<'a>, KernelError> {
        let misaligned = KernelError::Misaligned {
            index,
            alignment: 4,
        };
        match self.bytes {
            BindingBytes::Shared { words, len, .. } => Ok(F32s::Shared(words.prefix(len / 4))),
            BindingBytes::Unaligned { .. } => Err(misaligned),
            BindingBytes::ReadOnly(b) => {
                if b.as_ptr().align_offset(4) != 0 {
                    return Err(misaligned);
                }
                Ok(F32s::ReadOnly(b))
            }
        }
    }
}

impl Facts for Binding<'_> {
    /// Its address, length and writability, for a kernel's [contract](hal_core::contract).
    #[inline]
    fn facts(&self) -> BindingFacts {
        let start = match self.bytes {
            BindingBytes::Shared { words, .. } => words.addr(),
            BindingBytes::Unaligned { start, .. } => start,
            BindingBytes::ReadOnly(b) => b.as_ptr() as usize,
        };
        BindingFacts {
            offset: start as u64,
            len: self.len() as u64,
            writable: self.is_writable(),
        }
    }
}

/// A binding viewed as `f32` elements.
#[derive(Clone, Copy)]
pub enum F32s<'a> {
    /// Shared device memory.
    Shared(Words<'a>),
    /// Read-only bytes, 4-byte aligned.
    ReadOnly(&'a [u8]),
}

impl F32s<'_> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            F32s::Shared(w) => w.len(),
            F32s::ReadOnly(b) => b.len() / 4,
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`; callers check `len()` first (out of range reads 0.0 rather than panic).
    #[inline]
    pub fn get(&self, i: usize) -> f32 {
        match self {
            F32s::Shared(w) => w
                .get(i)
                .map_or(0.0, |a| f32::from_bits(a.load(Ordering::Relaxed))),
            F32s::ReadOnly(b) => i
                .checked_mul(4)
                .and_then(|at| b.get(at..at.checked_add(4)?))
                .map_or(0.0, |s| f32::from_ne_bytes([s[0], s[1], s[2], s[3]])),
        }
    }

    /// Writes element `i`; out of range or read-only writes are ignored (callers check
    /// `len()` and take outputs through [`Workgroup::output_f32`]).
    #[inline]
    pub fn set(&self, i: usize, value: f32) {
        if let F32s::Shared(w) = self {
            if let Some(a) = w.get(i) {
                a.store(value.to_bits(), Ordering::Relaxed);
            }
        }
    }

    /// Copies elements `start..start + out.len()` into `out` (a block into locals).
    pub fn read_into(&self, start: usize, out: &mut [f32]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = start.checked_add(k).map_or(0.0, |i| self.get(i));
        }
    }

    /// Stores `values` at elements `start..`.
    pub fn write_from(&self, start: usize, values: &[f32]) {
        for (k, v) in values.iter().enumerate() {
            if let Some(i) = start.checked_add(k) {
                self.set(i, *v);
            }
        }
    }
}
