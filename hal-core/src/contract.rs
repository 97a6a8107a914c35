//! Kernel contracts: a kernel's push constants, bindings and shape rules as data, and the
//! one check every driver runs against them. The kernels' own contracts are declared where
//! the kernels are specified (`ember-kernels`); this module names no kernel.
//!
//! A [`Contract`] is data: the constants a kernel reads (plain values, dimensions that must
//! be non-zero, widths that must also fit a bound, optional values with a default, optional
//! flag bits), the bindings it
//! reads and writes (element size and alignment, how many elements each must hold), and the
//! messages its shape refusals carry.
//! [`Contract::check`] holds a dispatch's push constants and [`BindingFacts`] against it and
//! answers with the parsed constants or the [`KernelError`] the kernel refuses with. The local
//! driver's kernels call it for every workgroup before they touch memory; the Vulkan driver
//! calls it on the host before recording a dispatch, since a GPU kernel cannot report an
//! error. Both therefore refuse the same dispatches with the same errors.
//!
//! # What `check` checks, in order
//!
//! The first failing check wins:
//!
//! 1. **Push constants**: fewer than the required ones (every [`Constant`] but the trailing
//!    optional ones, [`Constant::Optional`] and [`Constant::Flags`]) is
//!    [`KernelError::MissingConstants`] naming how many are required. Extra constants are
//!    ignored; an absent optional value is its default, absent flags are 0.
//! 2. **Dimensions**: a [`Constant::Dimension`] or [`Constant::Width`] of 0 is
//!    [`KernelError::Shape`] with [`Refusals::zero`]; then a [`Constant::Width`] above its
//!    `max` is [`KernelError::Shape`] with its own `refusal`.
//! 3. **Flags**: bits outside [`Constant::Flags`]'s `known` are [`KernelError::Shape`] with
//!    [`Refusals::flags`].
//! 4. **Sizes**: every element count a [`Count::Product`] describes must have a size in
//!    bytes that fits `u64` and this machine's address space, else [`KernelError::Shape`]
//!    with [`Refusals::overflow`].
//! 5. **Bindings**, those the dispatch uses (a binding with [`BindingRule::only_with`] only
//!    when the flags have those bits), as the contract's [`Order`] says. The *view* of
//!    binding `i`: it must be bound ([`KernelError::MissingBinding`]), writable if the kernel
//!    writes it ([`KernelError::ReadOnly`]), and start aligned for its element
//!    ([`KernelError::Misaligned`]). Its *size*: it must hold the elements its [`Count`]
//!    asks for ([`KernelError::BindingTooSmall`], with its length and the bytes needed).
//!    A trailing partial element is never counted.
//!
//! ```
//! use hal_core::contract::{BindingFacts, BindingRule, Constant, Contract, Count, Order, Refusals};
//! use hal_core::kernel::KernelError;
//!
//! // A kernel that scales a `rows × cols` matrix into another.
//! static SCALE: Contract = Contract {
//!     name: "scale",
//!     constants: &[Constant::Dimension("rows"), Constant::Dimension("cols")],
//!     bindings: &[
//!         BindingRule::read("in", Count::Product(0, 1)),
//!         BindingRule::write("out", Count::Product(0, 1)),
//!     ],
//!     order: Order::ViewsThenSizes,
//!     refusals: Refusals {
//!         zero: "scale: rows and cols must be non-zero",
//!         flags: "",
//!         overflow: "scale: rows * cols overflows",
//!     },
//! };
//!
//! let words = |len| BindingFacts { offset: 0, len, writable: true };
//! // 2 rows of 3: in and out need 24 bytes each.
//! let checked = SCALE.check(&[2, 3], &[words(24), words(24)])?;
//! assert_eq!(checked.constants[..2], [2, 3]);
//! assert_eq!(
//!     SCALE.check(&[2, 3], &[words(24), words(20)]),
//!     Err(KernelError::BindingTooSmall { index: 1, len: 20, needed: 24 })
//! );
//! assert_eq!(
//!     SCALE.check(&[0, 3], &[words(0), words(0)]),
//!     Err(KernelError::Shape("scale: rows and cols must be non-zero"))
//! );
//! # Ok::<(), KernelError>(())
//! ```

use crate::kernel::KernelError;

/// The most push constants a contract declares; [`Checked::constants`] holds this many.
pub const MAX_CONSTANTS: usize = 4;

/// One push constant a kernel reads, by its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constant {
    /// Any value (named for documentation).
    Value(&'static str),
    /// A dimension: must be non-zero.
    Dimension(&'static str),
    /// A dimension a kernel holds whole in scratch memory: from 1 to `max`.
    Width {
        /// Its name.
        name: &'static str,
        /// The largest value accepted.
        max: u32,
        /// The message of the refusal of a larger value.
        refusal: &'static str,
    },
    /// Any value, which a dispatch may leave out: then `default`. Only trailing constants
    /// may be optional (this, or [`Flags`](Self::Flags)).
    Optional {
        /// Its name.
        name: &'static str,
        /// Its value when the dispatch does not give it.
        default: u32,
    },
    /// Optional flag bits, 0 when the dispatch does not give them; only the last constant
    /// may be flags.
    Flags {
        /// Its name.
        name: &'static str,
        /// The bits the kernel knows; any other bit is refused.
        known: u32,
    },
}

impl Constant {
    /// Whether a dispatch may leave the constant out ([`Optional`](Self::Optional) or
    /// [`Flags`](Self::Flags)).
    #[inline]
    pub const fn is_optional(&self) -> bool {
        matches!(self, Self::Optional { .. } | Self::Flags { .. })
    }

    /// The value a dispatch that leaves the constant out gives it: an optional value's
    /// default, otherwise 0.
    #[inline]
    pub const fn absent(&self) -> u32 {
        match self {
            Self::Optional { default, .. } => *default,
            _ => 0,
        }
    }
}

/// Whether a kernel only reads a binding or also writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only: the binding may be read-only.
    Read,
    /// Written: the binding must be writable.
    Write,
}

/// The element type a kernel sees in a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// Size in bytes (a power of two).
    pub size: u32,
    /// Alignment in bytes (a power of two) the binding's start needs.
    pub align: u32,
}

impl Element {
    /// A 32-bit word (`u32` or `f32`), 4-byte aligned.
    pub const WORD: Self = Self { size: 4, align: 4 };

    /// How many whole elements `len` bytes hold (a shift: sizes are powers of two).
    #[inline]
    fn count(&self, len: u64) -> u64 {
        len >> self.size.trailing_zeros()
    }
}

/// How many elements a binding must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Any number: the kernel works on what is there.
    Any,
    /// At least as many as binding `i` holds (the output whose length sets the work).
    AsBinding(u8),
    /// Constant `i`.
    Constant(u8),
    /// Constant `a` times constant `b` (a matrix).
    Product(u8, u8),
}

/// One binding a kernel reads, by its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingRule {
    /// Its name (for documentation).
    pub name: &'static str,
    /// Read, or also written.
    pub access: Access,
    /// What it holds.
    pub element: Element,
    /// How many elements it must hold.
    pub count: Count,
    /// Flag bits that must all be set for the kernel to use the binding; 0: always used.
    pub only_with: u32,
}

impl BindingRule {
    /// A binding of 32-bit words, read, always used.
    pub const fn read(name: &'static str, count: Count) -> Self {
        Self {
            name,
            access: Access::Read,
            element: Element::WORD,
            count,
            only_with: 0,
        }
    }

    /// A binding of 32-bit words, written, always used.
    pub const fn write(name: &'static str, count: Count) -> Self {
        Self {
            access: Access::Write,
            ..Self::read(name, count)
        }
    }

    /// Used only when the flags have all of `bits`.
    pub const fn only_with(self, bits: u32) -> Self {
        Self {
            only_with: bits,
            ..self
        }
    }
}

/// In which order a contract checks its bindings' views and sizes (see the
/// [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Every binding's view in turn, then every binding's size in turn (a size may then
    /// depend on a later binding, as an output's length sets the work).
    ViewsThenSizes,
    /// Binding by binding: its view, then its size.
    BindingByBinding,
}

/// The messages of a contract's shape refusals ([`KernelError::Shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusals {
    /// A dimension is 0.
    pub zero: &'static str,
    /// Unknown flag bits.
    pub flags: &'static str,
    /// A size in bytes overflows.
    pub overflow: &'static str,
}

impl Refusals {
    /// For a contract with no dimensions and no flags.
    pub const NONE: Self = Self {
        zero: "",
        flags: "",
        overflow: "",
    };
}

/// A kernel's contract: what it reads and what it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    /// The kernel's name, as drivers and modules spell it.
    pub name: &'static str,
    /// Its push constants, in order (at most [`MAX_CONSTANTS`]).
    pub constants: &'static [Constant],
    /// Its bindings, in order (at most [`MAX_BINDINGS`](crate::command::MAX_BINDINGS)).
    pub bindings: &'static [BindingRule],
    /// The order its bindings are checked in.
    pub order: Order,
    /// Its shape refusals' messages.
    pub refusals: Refusals,
}

/// What a contract needs to know about one bound buffer range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingFacts {
    /// Where it starts: an address, or an offset from a start aligned for every element type
    /// (a buffer's start).
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Whether the kernel may write it.
    pub writable: bool,
}

/// A binding a contract can be checked against: a driver's own view of a bound range, or
/// [`BindingFacts`] themselves.
pub trait Facts {
    /// What the contract needs to know about it.
    fn facts(&self) -> BindingFacts;
}

impl Facts for BindingFacts {
    #[inline]
    fn facts(&self) -> BindingFacts {
        *self
    }
}

/// A dispatch a contract accepted: its push constants, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// The declared constants in order (absent optional ones as their defaults, absent flags
    /// as 0), then zeros.
    pub constants: [u32; MAX_CONSTANTS],
}

impl Contract {
    /// Checks a dispatch's push `constants` and `bindings` against the contract: its
    /// parsed constants, or the first refusal, in the order the
    /// [module documentation](self) gives.
    ///
    /// # Errors
    ///
    /// The [`KernelError`] the kernel refuses the dispatch with.
    pub fn check<B: Facts>(
        &self,
        constants: &[u32],
        bindings: &[B],
    ) -> Result<Checked, KernelError> {
        let needed = self.required_constants();
        if constants.len() < needed {
            return Err(KernelError::MissingConstants {
                needed: needed as u32,
                given: constants.len() as u32,
            });
        }
        // Plain loops over the declarations (no iterator adaptors): this runs in every
        // firmware that dispatches a kernel with a contract, built for size.
        let mut values = [0; MAX_CONSTANTS];
        let (mut flags, mut zero, mut unknown) = (0, false, false);
        for (i, declared) in self.constants.iter().enumerate().take(MAX_CONSTANTS) {
            let value = match constants.get(i) {
                Some(&value) => value,
                None => declared.absent(),
            };
            values[i] = value;
            match *declared {
                Constant::Value(_) | Constant::Optional { .. } => {}
                Constant::Dimension(_) | Constant::Width { .. } => zero |= value == 0,
                Constant::Flags { known, .. } => {
                    flags = value;
                    unknown = value & !known != 0;
                }
            }
        }
        if zero {
            return Err(KernelError::Shape(self.refusals.zero));
        }
        // A loop of its own: the loop above runs for every dispatch of every kernel, and a
        // refusal carried through it costs `matmul_f32` about 130 ns a dispatch on x86-64.
        for (declared, &value) in self.constants.iter().zip(&values) {
            if let Constant::Width { max, refusal, .. } = *declared {
                if value > max {
                    return Err(KernelError::Shape(refusal));
                }
            }
        }
        if unknown {
            return Err(KernelError::Shape(self.refusals.flags));
        }
        for rule in self.bindings {
            if let Count::Product(a, b) = rule.count {
                if rule.used(flags) && bytes(&values, a, b, rule.element.size).is_none() {
                    return Err(KernelError::Shape(self.refusals.overflow));
                }
            }
        }
        let by_binding = self.order == Order::BindingByBinding;
        for (i, rule) in self.bindings.iter().enumerate() {
            if rule.used(flags) {
                view(rule, i, bindings)?;
                if by_binding {
                    self.size(rule, i, &values, bindings)?;
                }
            }
        }
        if !by_binding {
            for (i, rule) in self.bindings.iter().enumerate() {
                if rule.used(flags) {
                    self.size(rule, i, &values, bindings)?;
                }
            }
        }
        Ok(Checked { constants: values })
    }

    /// How many constants a dispatch must give: all but the trailing optional ones.
    #[inline]
    pub fn required_constants(&self) -> usize {
        let mut needed = self.constants.len();
        while needed > 0 && self.constants[needed - 1].is_optional() {
            needed -= 1;
        }
        needed
    }

    /// Binding `i` holds what `rule` asks for.
    fn size<B: Facts>(
        &self,
        rule: &BindingRule,
        i: usize,
        values: &[u32; MAX_CONSTANTS],
        bindings: &[B],
    ) -> Result<(), KernelError> {
        let value = |c: u8| u64::from(values.get(usize::from(c)).copied().unwrap_or(0));
        let needed = match rule.count {
            Count::Any => return Ok(()),
            Count::AsBinding(j) => {
                let j = usize::from(j);
                match (bindings.get(j), self.bindings.get(j)) {
                    (Some(b), Some(r)) => r.element.count(b.facts().len),
                    _ => 0,
                }
            }
            Count::Constant(c) => value(c),
            Count::Product(a, b) => value(a) * value(b),
        };
        let len = bindings.get(i).map_or(0, |b| b.facts().len);
        if rule.element.count(len) >= needed {
            return Ok(());
        }
        Err(KernelError::BindingTooSmall {
            index: i as u32,
            len,
            needed: needed.saturating_mul(u64::from(rule.element.size)),
        })
    }
}

impl BindingRule {
    /// Whether a dispatch with these flags uses the binding.
    #[inline]
    fn used(&self, flags: u32) -> bool {
        flags & self.only_with == self.only_with
    }
}

/// Binding `i` is bound, writable if `rule` writes it, and aligned for its element.
fn view<B: Facts>(rule: &BindingRule, i: usize, bindings: &[B]) -> Result<(), KernelError> {
    let index = i as u32;
    let facts = bindings
        .get(i)
        .ok_or(KernelError::MissingBinding {
            index,
            bound: bindings.len() as u32,
        })?
        .facts();
    if rule.access == Access::Write && !facts.writable {
        return Err(KernelError::ReadOnly { index });
    }
    let align = rule.element.align;
    // A power of two: a mask, no division (which would pull 64-bit division into 32-bit
    // firmware).
    if facts.offset & u64::from(align.wrapping_sub(1)) != 0 {
        return Err(KernelError::Misaligned {
            index,
            alignment: align,
        });
    }
    Ok(())
}

/// The size in bytes of `values[a] × values[b]` elements of `size` bytes, if it and the
/// element count fit both `u64` and this machine's address space (`usize`).
#[inline]
fn bytes(values: &[u32; MAX_CONSTANTS], a: u8, b: u8, size: u32) -> Option<u64> {
    let value = |c: u8| u64::from(values.get(usize::from(c)).copied().unwrap_or(0));
    // A product of two `u32`s always fits a `u64`; its size in bytes may not.
    let count = value(a) * value(b);
    let bytes = count.checked_mul(u64::from(size))?;
    usize::try_from(bytes).ok()?;
    usize::try_from(count).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use KernelError::{BindingTooSmall, Misaligned, MissingBinding};

    fn rw(len: u64) -> BindingFacts {
        BindingFacts {
            offset: 0,
            len,
            writable: true,
        }
    }

    fn at(offset: u64, b: BindingFacts) -> BindingFacts {
        BindingFacts { offset, ..b }
    }

    fn small(index: u32, len: u64, needed: u64) -> KernelError {
        BindingTooSmall { index, len, needed }
    }

    fn missing(index: u32, bound: u32) -> KernelError {
        MissingBinding { index, bound }
    }

    fn shape(what: &'static str) -> KernelError {
        KernelError::Shape(what)
    }

    /// A contract of another shape: a 2-byte element, a binding used only with a flag,
    /// element sizes in the counts.
    #[test]
    fn other_elements_and_flag_bindings() {
        static HALVES: Contract = Contract {
            name: "halves",
            constants: &[
                Constant::Dimension("n"),
                Constant::Flags {
                    name: "flags",
                    known: 0b11,
                },
            ],
            bindings: &[
                BindingRule {
                    element: Element { size: 2, align: 2 },
                    ..BindingRule::read("x", Count::Constant(0))
                },
                BindingRule::write("y", Count::Product(0, 0)).only_with(0b10),
            ],
            order: Order::ViewsThenSizes,
            refusals: Refusals {
                zero: "zero",
                flags: "flags",
                overflow: "overflow",
            },
        };
        let c = |k: &[u32], b: &[BindingFacts]| HALVES.check(k, b).map(drop);
        assert_eq!(c(&[3], &[at(2, rw(6))]), Ok(()));
        assert_eq!(
            c(&[3], &[at(1, rw(6))]),
            Err(Misaligned {
                index: 0,
                alignment: 2
            })
        );
        assert_eq!(c(&[3], &[rw(5)]), Err(small(0, 5, 6)));
        assert_eq!(c(&[3, 1], &[rw(6)]), Ok(()));
        assert_eq!(c(&[3, 2], &[rw(6)]), Err(missing(1, 1)));
        assert_eq!(c(&[3, 3], &[rw(6), rw(36)]), Ok(()));
        assert_eq!(c(&[3, 3], &[rw(6), rw(35)]), Err(small(1, 35, 36)));
        assert_eq!(c(&[3, 4], &[]), Err(shape("flags")));
        assert_eq!(c(&[0, 4], &[]), Err(shape("zero")));
        // The flag-only binding's size is only checked when it is used.
        assert_eq!(c(&[u32::MAX], &[rw(1 << 33)]), Ok(()));
        assert_eq!(c(&[u32::MAX, 2], &[rw(1 << 33)]), Err(shape("overflow")));
        assert_eq!(HALVES.required_constants(), 1);
    }

    /// A trailing optional value: absent, its default; given, as given; the constants
    /// before it still required.
    #[test]
    fn optional_values_take_their_default() {
        static SCALED: Contract = Contract {
            name: "scaled",
            constants: &[
                Constant::Dimension("n"),
                Constant::Optional {
                    name: "scale",
                    default: 0x3F80_0000,
                },
            ],
            bindings: &[BindingRule::write("y", Count::Constant(0))],
            order: Order::ViewsThenSizes,
            refusals: Refusals {
                zero: "zero",
                flags: "",
                overflow: "",
            },
        };
        assert_eq!(SCALED.required_constants(), 1);
        let checked = |k: &[u32]| SCALED.check(k, &[rw(12)]).map(|c| c.constants);
        assert_eq!(checked(&[3]), Ok([3, 0x3F80_0000, 0, 0]));
        assert_eq!(checked(&[3, 0]), Ok([3, 0, 0, 0]));
        assert_eq!(checked(&[3, 7, 9]), Ok([3, 7, 0, 0]));
        assert_eq!(
            checked(&[]),
            Err(KernelError::MissingConstants {
                needed: 1,
                given: 0
            })
        );
        assert_eq!(checked(&[0]), Err(shape("zero")));
        assert!(SCALED.constants[1].is_optional() && !SCALED.constants[0].is_optional());
        assert_eq!(SCALED.constants[1].absent(), 0x3F80_0000);
    }
}
