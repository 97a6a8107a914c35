//! Kernel contracts: each built-in kernel's push constants, bindings and shape rules,
//! declared once, and the one check every driver runs against them.
//!
//! A [`Contract`] is data: the constants a kernel reads (plain values, dimensions that must
//! be non-zero, widths that must also fit a bound, optional flag bits), the bindings it
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
//! 1. **Push constants**: fewer than the required ones (every [`Constant`] but a trailing
//!    [`Constant::Flags`]) is [`KernelError::MissingConstants`] naming how many are required.
//!    Extra constants are ignored; absent flags are 0.
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
//! use hal_core::contract::{self, BindingFacts};
//! use hal_core::kernel::KernelError;
//!
//! let words = |len| BindingFacts { offset: 0, len, writable: true };
//! // softmax_f32 over 2 rows of 3: in and out need 24 bytes each.
//! let softmax = contract::find("softmax_f32").unwrap();
//! let checked = softmax.check(&[2, 3], &[words(24), words(24)])?;
//! assert_eq!(checked.constants[..2], [2, 3]);
//! assert_eq!(
//!     softmax.check(&[2, 3], &[words(24), words(20)]),
//!     Err(KernelError::BindingTooSmall { index: 1, len: 20, needed: 24 })
//! );
//! # Ok::<(), KernelError>(())
//! ```

use crate::kernel::KernelError;

/// The most push constants a contract declares; [`Checked::constants`] holds this many.
pub const MAX_CONSTANTS: usize = 4;

/// `matmul_f32` flag bit 0 (constant 3): add `bias[j]` (binding 3) to column `j`.
pub const MATMUL_FLAG_BIAS: u32 = 1 << 0;

/// `matmul_f32` flag bit 1 (constant 3): ReLU after the bias.
pub const MATMUL_FLAG_RELU: u32 = 1 << 1;

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
    /// Optional flag bits, 0 when the dispatch does not give them; only the last constant
    /// may be flags.
    Flags {
        /// Its name.
        name: &'static str,
        /// The bits the kernel knows; any other bit is refused.
        known: u32,
    },
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
    /// The declared constants in order (absent flags as 0), then zeros.
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
        // firmware that dispatches a built-in kernel, built for size.
        let mut values = [0; MAX_CONSTANTS];
        let (mut flags, mut zero, mut unknown) = (0, false, false);
        for (i, declared) in self.constants.iter().enumerate().take(MAX_CONSTANTS) {
            let value = constants.get(i).copied().unwrap_or(0);
            values[i] = value;
            match *declared {
                Constant::Value(_) => {}
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

    /// How many constants a dispatch must give: all but trailing flags.
    #[inline]
    pub fn required_constants(&self) -> usize {
        match self.constants.last() {
            Some(Constant::Flags { .. }) => self.constants.len() - 1,
            _ => self.constants.len(),
        }
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

// The built-in kernels' contracts. Every driver's built-in kernel of the same name keeps it.

/// `fill_u32`: every whole word of `out` = `value`.
pub static FILL_U32: Contract = Contract {
    name: "fill_u32",
    constants: &[Constant::Value("value")],
    bindings: &[BindingRule::write("out", Count::Any)],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `copy_u32`: the first `dst.len` words of `src` into `dst`.
pub static COPY_U32: Contract = Contract {
    name: "copy_u32",
    constants: &[],
    bindings: &[
        BindingRule::read("src", Count::AsBinding(1)),
        BindingRule::write("dst", Count::Any),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// The bindings of `add_f32` and `mul_f32`: `a`, `b`, and `out`, whose length sets the work.
const BINARY: &[BindingRule] = &[
    BindingRule::read("a", Count::AsBinding(2)),
    BindingRule::read("b", Count::AsBinding(2)),
    BindingRule::write("out", Count::Any),
];

/// `add_f32`: `out[i] = a[i] + b[i]`.
pub static ADD_F32: Contract = Contract {
    name: "add_f32",
    constants: &[],
    bindings: BINARY,
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `mul_f32`: `out[i] = a[i] * b[i]`.
pub static MUL_F32: Contract = Contract {
    name: "mul_f32",
    constants: &[],
    bindings: BINARY,
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `relu_f32`: `out[i] = max(in[i], 0)`.
pub static RELU_F32: Contract = Contract {
    name: "relu_f32",
    constants: &[],
    bindings: &[
        BindingRule::read("in", Count::AsBinding(1)),
        BindingRule::write("out", Count::Any),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// `matmul_f32`: `C = A·B` (`M×K` by `K×N`), then `+ bias` per row with
/// [`MATMUL_FLAG_BIAS`], then ReLU with [`MATMUL_FLAG_RELU`].
pub static MATMUL_F32: Contract = Contract {
    name: "matmul_f32",
    constants: &[
        Constant::Dimension("M"),
        Constant::Dimension("K"),
        Constant::Dimension("N"),
        Constant::Flags {
            name: "flags",
            known: MATMUL_FLAG_BIAS | MATMUL_FLAG_RELU,
        },
    ],
    bindings: &[
        BindingRule::read("A", Count::Product(0, 1)),
        BindingRule::read("B", Count::Product(1, 2)),
        BindingRule::write("C", Count::Product(0, 2)),
        BindingRule::read("bias", Count::Constant(2)).only_with(MATMUL_FLAG_BIAS),
    ],
    order: Order::BindingByBinding,
    refusals: Refusals {
        zero: "matmul_f32: M, K and N must be non-zero",
        flags: "matmul_f32: unknown flag bits",
        overflow: "matmul_f32: matrix size overflows",
    },
};

/// `softmax_f32`: row-wise softmax of a `rows × cols` matrix.
pub static SOFTMAX_F32: Contract = Contract {
    name: "softmax_f32",
    constants: &[Constant::Dimension("rows"), Constant::Dimension("cols")],
    bindings: &[
        BindingRule::read("in", Count::Product(0, 1)),
        BindingRule::write("out", Count::Product(0, 1)),
    ],
    order: Order::ViewsThenSizes,
    refusals: Refusals {
        zero: "softmax_f32: rows and cols must be non-zero",
        flags: "",
        overflow: "softmax_f32: rows * cols overflows",
    },
};

/// The most hidden units and outputs `mlp_softmax_f32` takes: a GPU workgroup holds one
/// row's hidden layer and logits in workgroup memory, a CPU on the stack.
pub const MLP_MAX_WIDTH: u32 = 512;

/// `mlp_softmax_f32`: per row of `x`, `y = softmax(relu(x·w1 + b1)·w2 + b2)`.
pub static MLP_SOFTMAX_F32: Contract = Contract {
    name: "mlp_softmax_f32",
    constants: &[
        Constant::Dimension("M"),
        Constant::Dimension("K"),
        Constant::Width {
            name: "H",
            max: MLP_MAX_WIDTH,
            refusal: "mlp_softmax_f32: more than 512 hidden units",
        },
        Constant::Width {
            name: "N",
            max: MLP_MAX_WIDTH,
            refusal: "mlp_softmax_f32: more than 512 outputs",
        },
    ],
    bindings: &[
        BindingRule::read("x", Count::Product(0, 1)),
        BindingRule::read("w1", Count::Product(1, 2)),
        BindingRule::read("b1", Count::Constant(2)),
        BindingRule::read("w2", Count::Product(2, 3)),
        BindingRule::read("b2", Count::Constant(3)),
        BindingRule::write("y", Count::Product(0, 3)),
    ],
    order: Order::BindingByBinding,
    refusals: Refusals {
        zero: "mlp_softmax_f32: M, K, H and N must be non-zero",
        flags: "",
        overflow: "mlp_softmax_f32: matrix size overflows",
    },
};

/// `noop`: nothing; accepts any dispatch.
pub static NOOP: Contract = Contract {
    name: "noop",
    constants: &[],
    bindings: &[],
    order: Order::ViewsThenSizes,
    refusals: Refusals::NONE,
};

/// Every built-in kernel's contract, in the local driver's table order.
pub static BUILTIN: [&Contract; 9] = [
    &FILL_U32,
    &COPY_U32,
    &ADD_F32,
    &MUL_F32,
    &RELU_F32,
    &MATMUL_F32,
    &SOFTMAX_F32,
    &MLP_SOFTMAX_F32,
    &NOOP,
];

/// The built-in contract of the kernel named `name`.
pub fn find(name: &str) -> Option<&'static Contract> {
    BUILTIN.iter().copied().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::MAX_BINDINGS;
    use KernelError::{BindingTooSmall, Misaligned, MissingBinding, MissingConstants, ReadOnly};

    const BIAS: u32 = MATMUL_FLAG_BIAS;
    const RELU: u32 = MATMUL_FLAG_RELU;

    fn rw(len: u64) -> BindingFacts {
        BindingFacts {
            offset: 0,
            len,
            writable: true,
        }
    }

    fn ro(len: u64) -> BindingFacts {
        BindingFacts {
            writable: false,
            ..rw(len)
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

    fn constants(needed: u32, given: u32) -> KernelError {
        MissingConstants { needed, given }
    }

    fn misaligned(index: u32) -> KernelError {
        Misaligned {
            index,
            alignment: 4,
        }
    }

    fn read_only(index: u32) -> KernelError {
        ReadOnly { index }
    }

    fn shape(what: &'static str) -> KernelError {
        KernelError::Shape(what)
    }

    fn check(name: &str, constants: &[u32], bindings: &[BindingFacts]) -> Result<(), KernelError> {
        find(name).expect(name).check(constants, bindings).map(drop)
    }

    /// Every built-in contract is well formed: a name found once, at most `MAX_CONSTANTS`
    /// constants with flags only last, at most `MAX_BINDINGS` bindings whose counts name
    /// declared constants and bindings (a binding's size never depends on a binding checked
    /// after it), flag-only bindings under known flags, messages for every refusal it can
    /// make.
    #[test]
    fn builtin_contracts_are_well_formed() {
        for (i, c) in BUILTIN.iter().enumerate() {
            assert!(BUILTIN[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            assert!(core::ptr::eq(find(c.name).unwrap(), *c));
            assert!(c.constants.len() <= MAX_CONSTANTS, "{}", c.name);
            assert!(c.bindings.len() <= MAX_BINDINGS, "{}", c.name);
            let flags = c
                .constants
                .iter()
                .position(|k| matches!(k, Constant::Flags { .. }));
            if let Some(at) = flags {
                assert_eq!(at, c.constants.len() - 1, "{}: flags last", c.name);
                assert!(!c.refusals.flags.is_empty(), "{}", c.name);
            }
            let known = match c.constants.last() {
                Some(Constant::Flags { known, .. }) => *known,
                _ => 0,
            };
            if c.constants
                .iter()
                .any(|k| matches!(k, Constant::Dimension(_) | Constant::Width { .. }))
            {
                assert!(!c.refusals.zero.is_empty(), "{}", c.name);
            }
            for (j, b) in c.bindings.iter().enumerate() {
                assert_eq!(b.only_with & !known, 0, "{} binding {j}", c.name);
                assert!(b.element.size.is_power_of_two() && b.element.align.is_power_of_two());
                let constant = |k: u8| assert!(usize::from(k) < c.constants.len());
                match b.count {
                    Count::Any => {}
                    Count::AsBinding(k) => {
                        assert!(usize::from(k) < c.bindings.len() && usize::from(k) != j);
                        if c.order == Order::BindingByBinding {
                            assert!(usize::from(k) < j, "{} binding {j}", c.name);
                        }
                    }
                    Count::Constant(k) => constant(k),
                    Count::Product(x, y) => {
                        constant(x);
                        constant(y);
                        assert!(!c.refusals.overflow.is_empty(), "{}", c.name);
                    }
                }
            }
        }
        assert!(find("nope").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn fill_u32() {
        assert_eq!(check("fill_u32", &[7], &[rw(16)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[rw(7)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[rw(0)]), Ok(()));
        assert_eq!(check("fill_u32", &[7], &[at(8, rw(16))]), Ok(()));
        assert_eq!(check("fill_u32", &[], &[rw(16)]), Err(constants(1, 0)));
        assert_eq!(check("fill_u32", &[], &[]), Err(constants(1, 0)));
        assert_eq!(check("fill_u32", &[1], &[]), Err(missing(0, 0)));
        assert_eq!(check("fill_u32", &[1], &[ro(16)]), Err(read_only(0)));
        // Read-only is found before misaligned.
        assert_eq!(check("fill_u32", &[1], &[at(2, ro(16))]), Err(read_only(0)));
        assert_eq!(
            check("fill_u32", &[1], &[at(2, rw(16))]),
            Err(misaligned(0))
        );
        let value = FILL_U32.check(&[0xDEAD_BEEF, 9], &[rw(4)]).unwrap();
        assert_eq!(value.constants, [0xDEAD_BEEF, 0, 0, 0]);
    }

    #[test]
    fn copy_u32() {
        assert_eq!(check("copy_u32", &[], &[rw(16), rw(16)]), Ok(()));
        // A trailing partial word counts on neither side.
        assert_eq!(check("copy_u32", &[], &[ro(19), rw(18)]), Ok(()));
        assert_eq!(
            check("copy_u32", &[], &[rw(12), rw(16)]),
            Err(small(0, 12, 16))
        );
        assert_eq!(
            check("copy_u32", &[], &[rw(15), rw(16)]),
            Err(small(0, 15, 16))
        );
        assert_eq!(check("copy_u32", &[], &[rw(16)]), Err(missing(1, 1)));
        assert_eq!(check("copy_u32", &[], &[]), Err(missing(0, 0)));
        assert_eq!(check("copy_u32", &[], &[rw(16), ro(16)]), Err(read_only(1)));
        assert_eq!(
            check("copy_u32", &[], &[at(1, rw(16)), ro(16)]),
            Err(misaligned(0))
        );
        assert_eq!(
            check("copy_u32", &[], &[rw(16), at(6, rw(16))]),
            Err(misaligned(1))
        );
        // Views before sizes: the short source is misaligned first.
        assert_eq!(
            check("copy_u32", &[], &[at(3, rw(4)), rw(16)]),
            Err(misaligned(0))
        );
        assert_eq!(check("copy_u32", &[], &[rw(4), ro(16)]), Err(read_only(1)));
    }

    #[test]
    fn add_mul_relu() {
        for name in ["add_f32", "mul_f32"] {
            assert_eq!(check(name, &[], &[rw(24), ro(24), rw(24)]), Ok(()));
            assert_eq!(check(name, &[], &[rw(32), rw(28), rw(24)]), Ok(()));
            assert_eq!(check(name, &[], &[rw(0), rw(0), rw(3)]), Ok(()));
            assert_eq!(
                check(name, &[], &[rw(20), rw(24), rw(24)]),
                Err(small(0, 20, 24))
            );
            assert_eq!(
                check(name, &[], &[rw(24), rw(20), rw(24)]),
                Err(small(1, 20, 24))
            );
            assert_eq!(
                check(name, &[], &[rw(20), rw(20), rw(24)]),
                Err(small(0, 20, 24))
            );
            assert_eq!(check(name, &[], &[rw(24), rw(24)]), Err(missing(2, 2)));
            assert_eq!(
                check(name, &[], &[rw(24), rw(24), ro(24)]),
                Err(read_only(2))
            );
            assert_eq!(
                check(name, &[], &[rw(24), at(2, rw(24)), ro(24)]),
                Err(misaligned(1))
            );
            assert_eq!(check(name, &[], &[rw(4), rw(4), ro(24)]), Err(read_only(2)));
        }
        assert_eq!(check("relu_f32", &[], &[rw(24), rw(24)]), Ok(()));
        assert_eq!(
            check("relu_f32", &[], &[rw(20), rw(24)]),
            Err(small(0, 20, 24))
        );
        assert_eq!(check("relu_f32", &[], &[rw(24)]), Err(missing(1, 1)));
        assert_eq!(check("relu_f32", &[], &[rw(24), ro(24)]), Err(read_only(1)));
        assert_eq!(
            check("relu_f32", &[], &[rw(24), at(4, ro(24))]),
            Err(read_only(1))
        );
    }

    #[test]
    fn matmul_f32() {
        let zero = shape("matmul_f32: M, K and N must be non-zero");
        let flags = shape("matmul_f32: unknown flag bits");
        let overflow = shape("matmul_f32: matrix size overflows");
        let m = "matmul_f32";
        // 5x7 · 7x3: A 140 bytes, B 84, C 60, bias 12.
        let ok = [rw(140), rw(84), rw(60)];
        assert_eq!(check(m, &[5, 7, 3], &ok), Ok(()));
        assert_eq!(check(m, &[5, 7, 3, 0], &[ro(140), ro(84), rw(60)]), Ok(()));
        assert_eq!(check(m, &[5, 7, 3, RELU], &ok), Ok(()));
        let with_bias = [rw(140), rw(84), rw(60), ro(12)];
        assert_eq!(check(m, &[5, 7, 3, BIAS], &with_bias), Ok(()));
        assert_eq!(
            MATMUL_F32.check(&[5, 7, 3], &ok).unwrap().constants,
            [5, 7, 3, 0]
        );
        assert_eq!(check(m, &[5, 7, 3, BIAS | RELU], &ok), Err(missing(3, 3)));
        let short_bias = [rw(140), rw(84), rw(60), rw(8)];
        assert_eq!(
            check(m, &[5, 7, 3, BIAS], &short_bias),
            Err(small(3, 8, 12))
        );
        assert_eq!(check(m, &[5, 7], &ok), Err(constants(3, 2)));
        assert_eq!(check(m, &[], &[]), Err(constants(3, 0)));
        assert_eq!(check(m, &[0, 7, 3], &ok), Err(zero));
        assert_eq!(check(m, &[5, 0, 3], &[]), Err(zero));
        // A zero dimension is found before unknown flags.
        assert_eq!(check(m, &[5, 7, 0, 99], &[]), Err(zero));
        assert_eq!(check(m, &[5, 7, 3, 4], &ok), Err(flags));
        assert_eq!(check(m, &[5, 7, 3, 1 << 31], &[]), Err(flags));
        for dims in [
            [u32::MAX, u32::MAX, 1],
            [1, u32::MAX, u32::MAX],
            [u32::MAX, 1, u32::MAX],
        ] {
            assert_eq!(check(m, &dims, &[]), Err(overflow), "{dims:?}");
        }
        // 2^34 bytes: past a 32-bit address space; on 64-bit, A is too small.
        let big = check(m, &[1 << 16, 1 << 16, 1], &[rw(8), rw(8), rw(8)]);
        if usize::BITS < 64 {
            assert_eq!(big, Err(overflow));
        } else {
            assert_eq!(big, Err(small(0, 8, 1 << 34)));
        }
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(136), rw(84), rw(60)]),
            Err(small(0, 136, 140))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(80), rw(60)]),
            Err(small(1, 80, 84))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(84), rw(56)]),
            Err(small(2, 56, 60))
        );
        // Binding by binding: A's size is found before B's alignment ...
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(136), at(2, rw(84)), rw(60)]),
            Err(small(0, 136, 140))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), at(2, rw(84)), rw(60)]),
            Err(misaligned(1))
        );
        // ... and C's before the bias is looked for.
        assert_eq!(
            check(m, &[5, 7, 3, BIAS], &[rw(140), rw(84), rw(56)]),
            Err(small(2, 56, 60))
        );
        assert_eq!(
            check(m, &[5, 7, 3], &[rw(140), rw(84), ro(60)]),
            Err(read_only(2))
        );
        assert_eq!(check(m, &[5, 7, 3], &[rw(140), rw(84)]), Err(missing(2, 2)));
        assert_eq!(check(m, &[5, 7, 3], &[rw(140)]), Err(missing(1, 1)));
    }

    #[test]
    fn softmax_f32() {
        let zero = shape("softmax_f32: rows and cols must be non-zero");
        let overflow = shape("softmax_f32: rows * cols overflows");
        let s = "softmax_f32";
        assert_eq!(check(s, &[2, 3], &[rw(24), rw(24)]), Ok(()));
        assert_eq!(check(s, &[2, 3, 9], &[ro(28), rw(24)]), Ok(()));
        assert_eq!(check(s, &[2], &[rw(24), rw(24)]), Err(constants(2, 1)));
        assert_eq!(check(s, &[0, 3], &[rw(24), rw(24)]), Err(zero));
        assert_eq!(check(s, &[2, 0], &[]), Err(zero));
        assert_eq!(check(s, &[u32::MAX, u32::MAX], &[]), Err(overflow));
        let big = check(s, &[1 << 16, 1 << 16], &[rw(24), rw(24)]);
        if usize::BITS < 64 {
            assert_eq!(big, Err(overflow));
        } else {
            assert_eq!(big, Err(small(0, 24, 1 << 34)));
        }
        assert_eq!(check(s, &[2, 3], &[rw(20), rw(24)]), Err(small(0, 20, 24)));
        assert_eq!(check(s, &[2, 3], &[rw(24), rw(20)]), Err(small(1, 20, 24)));
        // Views before sizes: the read-only output is found before the short input.
        assert_eq!(check(s, &[2, 3], &[rw(20), ro(20)]), Err(read_only(1)));
        assert_eq!(check(s, &[2, 3], &[rw(24)]), Err(missing(1, 1)));
        assert_eq!(
            check(s, &[2, 3], &[at(2, rw(24)), rw(24)]),
            Err(misaligned(0))
        );
    }

    #[test]
    fn mlp_softmax_f32() {
        // 2 rows of 3 inputs, 4 hidden units, 5 outputs: x 24 bytes, w1 48, b1 16, w2 80,
        // b2 20, y 40.
        let ok = [ro(24), ro(48), ro(16), ro(80), ro(20), rw(40)];
        let dims = [2, 3, 4, 5];
        assert_eq!(check("mlp_softmax_f32", &dims, &ok), Ok(()));
        assert_eq!(
            check("mlp_softmax_f32", &dims[..3], &ok),
            Err(constants(4, 3))
        );
        let zero = shape("mlp_softmax_f32: M, K, H and N must be non-zero");
        for i in 0..4 {
            let mut bad = dims;
            bad[i] = 0;
            assert_eq!(check("mlp_softmax_f32", &bad, &ok), Err(zero));
        }
        // The widest accepted, then one more; a zero is found before a width.
        let wide = [1, 1, MLP_MAX_WIDTH, MLP_MAX_WIDTH];
        let n = u64::from(MLP_MAX_WIDTH) * 4;
        let fits = [
            rw(4),
            rw(n),
            rw(n),
            rw(n * u64::from(MLP_MAX_WIDTH)),
            rw(n),
            rw(n),
        ];
        assert_eq!(check("mlp_softmax_f32", &wide, &fits), Ok(()));
        assert_eq!(
            check("mlp_softmax_f32", &[1, 1, MLP_MAX_WIDTH + 1, 1], &fits),
            Err(shape("mlp_softmax_f32: more than 512 hidden units"))
        );
        assert_eq!(
            check("mlp_softmax_f32", &[1, 1, 1, u32::MAX], &fits),
            Err(shape("mlp_softmax_f32: more than 512 outputs"))
        );
        assert_eq!(
            check("mlp_softmax_f32", &[0, 1, 1, u32::MAX], &fits),
            Err(zero)
        );
        assert_eq!(
            check("mlp_softmax_f32", &[u32::MAX, u32::MAX, 4, 5], &ok),
            Err(shape("mlp_softmax_f32: matrix size overflows"))
        );
        // Binding by binding, each needing its exact bytes.
        for (i, needed) in [24, 48, 16, 80, 20, 40].into_iter().enumerate() {
            let mut short = ok;
            short[i].len = needed - 4;
            assert_eq!(
                check("mlp_softmax_f32", &dims, &short),
                Err(small(i as u32, needed - 4, needed))
            );
        }
        assert_eq!(
            check("mlp_softmax_f32", &dims, &ok[..5]),
            Err(missing(5, 5))
        );
        let mut read_only_y = ok;
        read_only_y[5] = ro(40);
        assert_eq!(
            check("mlp_softmax_f32", &dims, &read_only_y),
            Err(read_only(5))
        );
    }

    #[test]
    fn noop_accepts_anything() {
        assert_eq!(check("noop", &[], &[]), Ok(()));
        assert_eq!(
            check("noop", &[1, 2, 3, 4, 5], &[ro(3), at(1, rw(5))]),
            Ok(())
        );
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
}
