//! A static program: a function of a module recorded at build time (`ember-build`), run
//! straight over one arena and the constant pool — no device, allocator, object table,
//! command buffer, semaphore or queue.
//!
//! Every binding is a [`Span`] fixed at build time: bytes of the arena (where the inputs,
//! the outputs and every intermediate value live) or of the constant pool. A dispatch calls
//! its kernel from the table the program is run with (the module's own kernels, in
//! executable order, so the linker keeps only those), once per workgroup, on this thread;
//! a [`Step::Call`] calls its kernel straight, its parameters a typed static
//! ([`direct`](crate::direct)).
//!
//! Invariants a well-formed program keeps (ember-build checks them at build time; [`run`]
//! checks them again and answers a broken one with [`ProgramError::Malformed`], never a
//! panic): every span lies inside its place; arena spans start 4-byte aligned; an
//! [`Entry::Exclusive`] kernel's written span overlaps no other binding of its dispatch;
//! copies and fills write the arena.
//!
//! ```
//! use hal_local::program::{run, Span, Step};
//!
//! // out = a + b, element-wise, over three floats in the arena.
//! let steps = [Step::Dispatch {
//!     executable: 0,
//!     workgroups: [1, 1, 1],
//!     constants: &[],
//!     bindings: &[Span::arena(0, 12), Span::pool(0, 12), Span::arena(16, 12)],
//!     scratch: Span::NONE,
//! }];
//! let pool: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
//! #[repr(align(4))]
//! struct Arena([u8; 32]);
//! let mut arena = Arena([0; 32]);
//! arena.0[..12].copy_from_slice(&pool);
//! run(&steps, &[hal_local::kernels::ADD_F32], &mut arena.0, &pool)?;
//! assert_eq!(arena.0[16..20], 2.0f32.to_le_bytes());
//! # Ok::<(), hal_local::program::ProgramError>(())
//! ```

use core::ops::Range;
use core::sync::atomic::AtomicU32;

use hal_core::command::MAX_BINDINGS;
use hal_core::kernel::KernelError;

use crate::kernel::{Binding, Entry, Kernel, KernelFn, Workgroup};
#[cfg(feature = "exclusive")]
use crate::kernel::{Bytes, Exclusive, ExclusiveFn, Tiler, Writes};

/// Where a span's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Place {
    /// The program's arena: inputs, outputs and intermediate values (written by the run).
    Arena,
    /// The module's constant pool (read-only).
    Pool,
}

/// Bytes `offset..offset + length` of a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Span {
    /// Which memory.
    pub place: Place,
    /// First byte.
    pub offset: u32,
    /// Bytes.
    pub length: u32,
}

impl Span {
    /// No bytes: the scratch of a dispatch that lends none.
    pub const NONE: Span = Span::arena(0, 0);

    /// Bytes of the arena.
    pub const fn arena(offset: u32, length: u32) -> Self {
        Self {
            place: Place::Arena,
            offset,
            length,
        }
    }

    /// Bytes of the constant pool.
    pub const fn pool(offset: u32, length: u32) -> Self {
        Self {
            place: Place::Pool,
            offset,
            length,
        }
    }

    /// The byte range (its end saturated, so a span past the address space is simply out
    /// of range).
    pub const fn range(&self) -> Range<usize> {
        let start = self.offset as usize;
        start..start.saturating_add(self.length as usize)
    }

    /// Whether both are arena spans that share a byte.
    #[cfg(feature = "exclusive")]
    fn overlaps(&self, other: &Span) -> bool {
        matches!((self.place, other.place), (Place::Arena, Place::Arena))
            && self.offset < other.offset.saturating_add(other.length)
            && other.offset < self.offset.saturating_add(self.length)
    }
}

/// One step of a static program.
#[derive(Debug, Clone, Copy)]
pub enum Step<'p> {
    /// Runs kernel `executable` of the program's table over a grid of workgroups.
    Dispatch {
        /// Index into the kernel table [`run`] is given.
        executable: u16,
        /// Workgroups per dimension.
        workgroups: [u32; 3],
        /// Push constants (the kernel's parameter words).
        constants: &'p [u32],
        /// The bindings, in order.
        bindings: &'p [Span],
        /// Scratch lent to the kernel (an arena span, empty where it asks for none):
        /// [`kernels::tflite::scratch_bytes`](crate::kernels) bytes, alive for this step.
        scratch: Span,
    },
    /// Copies `source` into `target` (an arena span of the same length; they may overlap).
    Copy {
        /// Where from.
        source: Span,
        /// Where to.
        target: Span,
    },
    /// Fills `target` (an arena span, a whole number of words) with a little-endian word.
    Fill {
        /// Where.
        target: Span,
        /// The word.
        pattern: u32,
    },
    /// Calls a kernel straight, its parameters decoded and checked at build time into a
    /// typed static ([`direct`](crate::direct)): no table entry, no words decoded.
    #[cfg(feature = "tflite")]
    Call(&'p dyn crate::direct::Call),
}

/// Why a program stopped. Steps before `step` have run; the arena holds what they wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ProgramError {
    /// The arena given does not start on a 4-byte boundary.
    MisalignedArena,
    /// Step `step`'s kernel refused its dispatch.
    Kernel {
        /// The step.
        step: u32,
        /// What the kernel said.
        error: KernelError,
    },
    /// Step `step` breaks a program invariant: a span outside its place, a misaligned arena
    /// span, an executable outside the table, or a written span that overlaps another.
    Malformed {
        /// The step.
        step: u32,
    },
}

impl core::fmt::Display for ProgramError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ProgramError::MisalignedArena => f.write_str("the arena is not 4-byte aligned"),
            ProgramError::Kernel { step, error } => write!(f, "step {step}: {error}"),
            ProgramError::Malformed { step } => write!(
                f,
                "step {step} is malformed (a span outside its memory, or overlapping the one it writes)"
            ),
        }
    }
}

impl core::error::Error for ProgramError {}

/// Runs `steps` in order over `arena` and `pool`, calling `kernels[executable]` for each
/// dispatch. The caller has written the inputs into their arena spans; the outputs are in
/// theirs when it returns `Ok`.
pub fn run(
    steps: &[Step<'_>],
    kernels: &[Kernel],
    arena: &mut [u8],
    pool: &[u8],
) -> Result<(), ProgramError> {
    run_steps(steps, kernels, arena, pool, true)
}

/// Runs `steps` as [`run`] does, except that each [`Step::Call`] cuts and checks its
/// bindings without calling its kernel: given kernels that do nothing, the runtime's own
/// work.
pub fn run_without_calls(
    steps: &[Step<'_>],
    kernels: &[Kernel],
    arena: &mut [u8],
    pool: &[u8],
) -> Result<(), ProgramError> {
    run_steps(steps, kernels, arena, pool, false)
}

/// [`run`], each direct call's kernel called if `call`.
fn run_steps(
    steps: &[Step<'_>],
    kernels: &[Kernel],
    arena: &mut [u8],
    pool: &[u8],
    call: bool,
) -> Result<(), ProgramError> {
    #[cfg(not(feature = "tflite"))]
    let _ = call;
    if arena.as_ptr().align_offset(4) != 0 {
        return Err(ProgramError::MisalignedArena);
    }
    for (index, step) in steps.iter().enumerate() {
        let step_index = index as u32;
        let malformed = ProgramError::Malformed { step: step_index };
        let failed = |failure: Failure| failure.at(step_index);
        match *step {
            Step::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
                scratch,
            } => {
                let kernel = kernels.get(usize::from(executable)).ok_or(malformed)?;
                // Only kernels over plain slices take scratch.
                #[cfg(not(feature = "exclusive"))]
                let _ = scratch;
                if bindings.len() > MAX_BINDINGS {
                    return Err(malformed);
                }
                let ran = match kernel.entry {
                    Entry::Shared(entry) => {
                        dispatch_shared(entry, workgroups, constants, bindings, arena, pool)
                    }
                    #[cfg(feature = "exclusive")]
                    Entry::Exclusive(entry, writes) => dispatch_exclusive(
                        entry, writes, workgroups, constants, bindings, scratch, arena, pool,
                    ),
                };
                ran.map_err(failed)?;
            }
            Step::Copy { source, target } => {
                let to = arena_range(&target, arena.len()).ok_or(malformed)?;
                if source.length != target.length {
                    return Err(malformed);
                }
                match source.place {
                    Place::Arena => {
                        let from = arena_range(&source, arena.len()).ok_or(malformed)?;
                        arena.copy_within(from, to.start);
                    }
                    Place::Pool => {
                        let from = pool.get(source.range()).ok_or(malformed)?;
                        arena[to].copy_from_slice(from);
                    }
                }
            }
            Step::Fill { target, pattern } => {
                let to = arena_range(&target, arena.len()).ok_or(malformed)?;
                if to.len() % 4 != 0 {
                    return Err(malformed);
                }
                for word in arena[to].chunks_exact_mut(4) {
                    word.copy_from_slice(&pattern.to_le_bytes());
                }
            }
            #[cfg(feature = "tflite")]
            Step::Call(direct) => {
                direct.call(arena, pool, call).map_err(failed)?;
            }
        }
    }
    Ok(())
}

/// Why a dispatch or a direct call did not run ([`ProgramError`] names its step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// It breaks a program invariant.
    Malformed,
    /// Its kernel refused it.
    Kernel(KernelError),
}

impl Failure {
    /// The program's error for this failure of step `step`.
    pub fn at(self, step: u32) -> ProgramError {
        match self {
            Failure::Malformed => ProgramError::Malformed { step },
            Failure::Kernel(error) => ProgramError::Kernel { step, error },
        }
    }
}

/// `span`'s range if it is an arena span inside `len` bytes.
fn arena_range(span: &Span, len: usize) -> Option<Range<usize>> {
    let range = span.range();
    (span.place == Place::Arena && range.end <= len).then_some(range)
}

/// Calls `run` with every workgroup id of a grid, x fastest, until one fails.
#[inline(always)]
fn each_workgroup(
    count: [u32; 3],
    mut run: impl FnMut([u32; 3]) -> Result<(), KernelError>,
) -> Result<(), Failure> {
    for z in 0..count[2] {
        for y in 0..count[1] {
            for x in 0..count[0] {
                run([x, y, z]).map_err(Failure::Kernel)?;
            }
        }
    }
    Ok(())
}

/// A dispatch of a kernel over shared bindings: arena spans as 32-bit atomic words (so a
/// kernel may work in place), pool spans read-only. Out of line, as is
/// [`dispatch_exclusive`], so a step's stack holds one kind's bindings only.
#[inline(never)]
fn dispatch_shared(
    entry: KernelFn,
    count: [u32; 3],
    constants: &[u32],
    spans: &[Span],
    arena: &mut [u8],
    pool: &[u8],
) -> Result<(), Failure> {
    // SAFETY: `arena` starts 4-byte aligned (checked by `run`) and the `len / 4` words lie
    // inside it; `AtomicU32` has the size, alignment and validity of `u32`, and every byte
    // pattern is a valid `u32`. The exclusive borrow of `arena` lasts the whole dispatch, so
    // while these words live every access to those bytes goes through them (bindings make
    // no other view), and no access of another size or kind races with them.
    let words: &[AtomicU32] =
        unsafe { core::slice::from_raw_parts(arena.as_mut_ptr().cast(), arena.len() / 4) };
    let mut bound = heapless::Vec::<Binding<'_>, MAX_BINDINGS>::new();
    for span in spans {
        let binding = match span.place {
            Place::Pool => Binding::read_only(pool.get(span.range()).ok_or(Failure::Malformed)?),
            Place::Arena => {
                let range = span.range();
                if range.start % 4 != 0 {
                    return Err(Failure::Malformed);
                }
                let covering = words
                    .get(range.start / 4..range.end.div_ceil(4))
                    .ok_or(Failure::Malformed)?;
                Binding::words(covering, range.len(), true)
            }
        };
        bound.push(binding).map_err(|_| Failure::Malformed)?;
    }
    let bindings = bound.as_slice();
    each_workgroup(count, |id| {
        entry(&Workgroup {
            id,
            count,
            constants,
            bindings,
        })
    })
}

/// The arena cut around a dispatch's written span and its scratch: each the only `&mut`
/// view of its bytes, every other arena binding read from the gaps around them.
#[cfg(feature = "exclusive")]
pub(crate) struct Cut<'a> {
    /// The written span's bytes.
    pub(crate) write: &'a mut [u8],
    /// The scratch's bytes (empty where the dispatch is lent none).
    pub(crate) lent: &'a mut [u8],
    /// What the dispatch reads.
    pub(crate) reads: Reads<'a>,
}

/// The bytes a dispatch may read: the constant pool, and the arena outside the ranges it
/// writes, as three gaps, each with the arena offset it starts at.
#[cfg(feature = "exclusive")]
pub(crate) struct Reads<'a> {
    gaps: [(usize, &'a [u8]); 3],
    pool: &'a [u8],
}

#[cfg(feature = "exclusive")]
impl<'a> Cut<'a> {
    /// `arena` cut around `out` and `scratch` (arena spans inside it that share no byte);
    /// `None` where they are not.
    #[inline(always)]
    pub(crate) fn new(
        arena: &'a mut [u8],
        pool: &'a [u8],
        out: Span,
        scratch: Span,
    ) -> Option<Self> {
        let out_range = arena_range(&out, arena.len())?;
        // An empty scratch sits where the output ends.
        let scratch_range = match scratch.length {
            0 => out_range.end..out_range.end,
            _ => arena_range(&scratch, arena.len())?,
        };
        if scratch.overlaps(&out) {
            return None;
        }
        // The arena as `gap0 | first | gap1 | second | gap2`, the two written ranges in the
        // order they lie.
        let out_first = out_range.start <= scratch_range.start;
        let (first, second) = if out_first {
            (out_range, scratch_range)
        } else {
            (scratch_range, out_range)
        };
        let (gap0, rest) = arena.split_at_mut(first.start);
        let (first_bytes, rest) = rest.split_at_mut(first.len());
        let (gap1, rest) = rest.split_at_mut(second.start - first.end);
        let (second_bytes, gap2) = rest.split_at_mut(second.len());
        let (write, lent) = if out_first {
            (first_bytes, second_bytes)
        } else {
            (second_bytes, first_bytes)
        };
        Some(Self {
            write,
            lent,
            reads: Reads {
                gaps: [(0, gap0), (first.end, gap1), (second.end, gap2)],
                pool,
            },
        })
    }
}

#[cfg(feature = "exclusive")]
impl<'a> Reads<'a> {
    /// `span`'s bytes: of the pool, or of the arena where they lie wholly in one gap (so
    /// they share no byte with what the dispatch writes); `None` otherwise.
    #[inline(always)]
    pub(crate) fn get(&self, span: &Span) -> Option<&'a [u8]> {
        let range = span.range();
        match span.place {
            Place::Pool => self.pool.get(range),
            Place::Arena => self.gaps.iter().find_map(|&(start, gap)| {
                let from = range.start.checked_sub(start)?;
                gap.get(from..from + range.len())
            }),
        }
    }
}

#[cfg(feature = "exclusive")]
/// A dispatch of a kernel over plain slices: the arena cut around the written span and the
/// scratch, so each is the only `&mut` view of its bytes and every other binding a shared
/// one.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn dispatch_exclusive(
    entry: ExclusiveFn,
    writes: Writes,
    count: [u32; 3],
    constants: &[u32],
    spans: &[Span],
    scratch: Span,
    arena: &mut [u8],
    pool: &[u8],
) -> Result<(), Failure> {
    let written = match writes {
        Writes::Binding(n) => usize::from(n),
        Writes::Last => spans.len().wrapping_sub(1),
    };
    let out = *spans.get(written).ok_or(Failure::Malformed)?;
    let Cut { write, lent, reads } =
        Cut::new(arena, pool, out, scratch).ok_or(Failure::Malformed)?;
    let mut write = Some(write);
    let mut bound = heapless::Vec::<Bytes<'_>, MAX_BINDINGS>::new();
    for (index, span) in spans.iter().enumerate() {
        let binding = if index == written {
            Bytes::Write(write.take().ok_or(Failure::Malformed)?)
        } else {
            Bytes::Read(reads.get(span).ok_or(Failure::Malformed)?)
        };
        bound.push(binding).map_err(|_| Failure::Malformed)?;
    }
    let bindings = bound.as_mut_slice();
    each_workgroup(count, |id| {
        entry(&mut Exclusive {
            id,
            count,
            constants,
            bindings: &mut *bindings,
            scratch: &mut *lent,
            tiler: Tiler::INLINE,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{ADD_F32, COPY_U32, RELU_F32};

    /// A 4-byte aligned arena of `N` bytes.
    #[repr(align(4))]
    struct Arena<const N: usize>([u8; N]);

    impl<const N: usize> Arena<N> {
        fn bytes(&mut self) -> &mut [u8] {
            &mut self.0
        }
    }

    fn floats(bytes: &[u8]) -> [f32; 3] {
        core::array::from_fn(|i| f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()))
    }

    /// Three floats, 4-byte aligned as a module's pool is.
    fn pool() -> Arena<12> {
        let mut pool = Arena([0u8; 12]);
        for (i, v) in [1.0f32, -2.0, 3.0].iter().enumerate() {
            pool.0[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        pool
    }

    #[test]
    fn shared_kernels_run_in_place_over_the_arena() {
        let pool = pool();
        let mut arena = Arena([0u8; 16]);
        let bytes = arena.bytes();
        let steps = [
            Step::Copy {
                source: Span::pool(0, 12),
                target: Span::arena(0, 12),
            },
            // x = x + pool, in place, then relu in place.
            Step::Dispatch {
                executable: 0,
                workgroups: [2, 1, 1],
                constants: &[],
                bindings: &[Span::arena(0, 12), Span::pool(0, 12), Span::arena(0, 12)],
                scratch: Span::NONE,
            },
            Step::Dispatch {
                executable: 1,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[Span::arena(0, 12), Span::arena(0, 12)],
                scratch: Span::NONE,
            },
            Step::Fill {
                target: Span::arena(12, 4),
                pattern: 7,
            },
        ];
        run(&steps, &[ADD_F32, RELU_F32], bytes, &pool.0).unwrap();
        assert_eq!(floats(bytes), [2.0, 0.0, 6.0]);
        assert_eq!(bytes[12..16], 7u32.to_le_bytes());
    }

    #[cfg(feature = "tflite")]
    #[test]
    fn exclusive_kernels_get_the_arena_cut_around_their_output() {
        use crate::kernels::tflite::QUANTIZE_F32_S8;
        use ember_kernels::quantize::QuantizeF32S8;
        use ember_kernels::KernelParams;
        // Quantize three floats in the arena at scale 1, zero point 0, into bytes after them.
        let mut words = heapless::Vec::<u32, 8>::new();
        QuantizeF32S8::prepare(3, 1.0, 0)
            .unwrap()
            .encode(&mut words);
        let constants = words.as_slice();
        let mut arena = Arena([0u8; 16]);
        let bytes = arena.bytes();
        bytes[..12].copy_from_slice(&pool().0);
        let bindings = [Span::arena(0, 12), Span::arena(12, 3)];
        let step = Step::Dispatch {
            executable: 0,
            workgroups: [1, 1, 1],
            constants,
            bindings: &bindings,
            scratch: Span::NONE,
        };
        let kernels = [QUANTIZE_F32_S8];
        run(&[step], &kernels, bytes, &[]).unwrap();
        assert_eq!(bytes[12..15], [1, (-2i8) as u8, 3]);

        // Its output overlapping its input is a malformed program, not a panic.
        let overlapping = [Span::arena(0, 12), Span::arena(8, 3)];
        let step = Step::Dispatch {
            executable: 0,
            workgroups: [1, 1, 1],
            constants,
            bindings: &overlapping,
            scratch: Span::NONE,
        };
        assert_eq!(
            run(&[step], &kernels, bytes, &[]),
            Err(ProgramError::Malformed { step: 0 })
        );
    }

    /// A kernel that fills the scratch it is lent with 9s and writes its length and its
    /// input's first byte to binding 1.
    #[cfg(feature = "exclusive")]
    fn uses_scratch(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
        wg.scratch.fill(9);
        let len = wg.scratch.len() as u8;
        let first = wg.bindings[0].bytes()[0];
        let out = wg.bindings[1].bytes_mut(1)?;
        out[0] = len;
        out[1] = first;
        Ok(())
    }

    #[cfg(feature = "exclusive")]
    #[test]
    fn a_dispatch_lends_its_scratch_apart_from_every_binding() {
        let kernels = [Kernel {
            name: "uses_scratch",
            entry: Entry::Exclusive(uses_scratch, Writes::Binding(1)),
        }];
        let mut arena = Arena([0u8; 16]);
        let bytes = arena.bytes();
        bytes[12] = 5;
        // Input at 12, output at 0, scratch between them; then the scratch before the
        // output.
        for (output, scratch) in [(0, 4), (8, 0)] {
            let step = Step::Dispatch {
                executable: 0,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[Span::arena(12, 4), Span::arena(output, 2)],
                scratch: Span::arena(scratch, 8),
            };
            bytes[..12].fill(0);
            run(&[step], &kernels, bytes, &[]).unwrap();
            assert_eq!(bytes[output as usize..output as usize + 2], [8, 5]);
            let lent = &bytes[scratch as usize..scratch as usize + 8];
            assert_eq!(lent, &[9; 8]);
        }
        // Scratch over the output, or over an input, is a malformed program.
        for scratch in [Span::arena(0, 4), Span::arena(10, 4)] {
            let step = Step::Dispatch {
                executable: 0,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[Span::arena(12, 4), Span::arena(0, 2)],
                scratch,
            };
            assert_eq!(
                run(&[step], &kernels, bytes, &[]),
                Err(ProgramError::Malformed { step: 0 })
            );
        }
    }

    #[test]
    fn broken_programs_are_errors() {
        let mut arena = Arena([0u8; 16]);
        let bytes = arena.bytes();
        let cases = [
            Step::Dispatch {
                executable: 5,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[],
                scratch: Span::NONE,
            },
            Step::Dispatch {
                executable: 0,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[Span::arena(0, 8), Span::arena(12, 8)],
                scratch: Span::NONE,
            },
            Step::Dispatch {
                executable: 0,
                workgroups: [1, 1, 1],
                constants: &[],
                bindings: &[Span::arena(2, 4), Span::arena(8, 4)],
                scratch: Span::NONE,
            },
            Step::Copy {
                source: Span::arena(0, 4),
                target: Span::pool(0, 4),
            },
            Step::Fill {
                target: Span::arena(0, 3),
                pattern: 0,
            },
        ];
        for step in cases {
            assert_eq!(
                run(&[step], &[COPY_U32], bytes, &[]),
                Err(ProgramError::Malformed { step: 0 }),
                "{step:?}"
            );
        }
        // A kernel's own refusal names the step.
        let short = Step::Dispatch {
            executable: 0,
            workgroups: [1, 1, 1],
            constants: &[],
            bindings: &[Span::arena(0, 4), Span::arena(4, 8)],
            scratch: Span::NONE,
        };
        assert!(matches!(
            run(&[short], &[COPY_U32], bytes, &[]),
            Err(ProgramError::Kernel { step: 0, .. })
        ));
        // A misaligned arena.
        assert_eq!(
            run(&[], &[], &mut bytes[1..], &[]),
            Err(ProgramError::MisalignedArena)
        );
    }
}
