#![doc = include_str!("../README.md")]

use hal_core::kernel::KernelError;
use hal_core::{Error, ShortName};

mod spirv {
    //! The SPIR-V words `build.rs` generated.
    include!(concat!(env!("OUT_DIR"), "/spirv.rs"));
}

/// Invocations per workgroup (`64 × 1 × 1`), fixed in every kernel's SPIR-V.
pub const WORKGROUP_SIZE: u32 = 64;

/// Size in bytes of the push-constant range every kernel declares (16 words).
pub const PUSH_CONSTANT_BYTES: u32 = 64;

/// How many bindings get a `base` word in the push constants (words 0..=7).
pub const MAX_BASES: usize = 8;

/// How many bindings get a `len` word in the push constants (words 8..=11).
pub const MAX_LENS: usize = 4;

/// How many of the dispatch's own push constants reach a kernel (words 12..=15).
pub const MAX_CONSTANTS: usize = 4;

/// `matmul_f32` flag bit 0 (constant 3): add `bias[j]` (binding 3) to column `j`.
pub const FLAG_BIAS: u32 = 1 << 0;

/// `matmul_f32` flag bit 1 (constant 3): ReLU after the bias.
pub const FLAG_RELU: u32 = 1 << 1;

/// One kernel's SPIR-V module and what the driver needs to run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpirvKernel {
    /// The kernel's name, as hal-local's table and modules spell it.
    pub name: &'static str,
    /// The compute entry point in [`words`](Self::words): always `main`.
    pub entry: &'static str,
    /// The SPIR-V module, as 32-bit words.
    pub words: &'static [u32],
    /// Storage-buffer descriptors the module declares: set 0, bindings `0..bindings`.
    pub bindings: u32,
}

/// Every kernel, in hal-local's table order.
pub static KERNELS: &[SpirvKernel] = &[
    kernel("fill_u32", spirv::FILL_U32, 1),
    kernel("copy_u32", spirv::COPY_U32, 2),
    kernel("add_f32", spirv::ADD_F32, 3),
    kernel("mul_f32", spirv::MUL_F32, 3),
    kernel("relu_f32", spirv::RELU_F32, 2),
    kernel("matmul_f32", spirv::MATMUL_F32, 4),
    kernel("softmax_f32", spirv::SOFTMAX_F32, 2),
    kernel("noop", spirv::NOOP, 0),
];

const fn kernel(name: &'static str, words: &'static [u32], bindings: u32) -> SpirvKernel {
    SpirvKernel {
        name,
        entry: "main",
        words,
        bindings,
    }
}

/// The kernel named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static SpirvKernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The 64-byte push-constant block, word for word (see the crate docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushConstants {
    /// Element offset of binding `i` inside its bound descriptor range (words 0..=7).
    pub base: [u32; MAX_BASES],
    /// Length of binding `i` in whole 4-byte elements (words 8..=11).
    pub len: [u32; MAX_LENS],
    /// The kernel's constants 0..=3 (words 12..=15).
    pub constants: [u32; MAX_CONSTANTS],
}

impl PushConstants {
    /// The block for a dispatch: `bases[i]` and `lens[i]` for its bindings (extra ones
    /// dropped, missing ones 0), and its constants (the first four; missing ones 0).
    pub fn new(bases: &[u32], lens: &[u32], constants: &[u32]) -> Self {
        let mut out = Self::default();
        for (to, from) in out.base.iter_mut().zip(bases) {
            *to = *from;
        }
        for (to, from) in out.len.iter_mut().zip(lens) {
            *to = *from;
        }
        for (to, from) in out.constants.iter_mut().zip(constants) {
            *to = *from;
        }
        out
    }

    /// The 16 words in order.
    pub fn words(&self) -> [u32; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.base);
        out[8..12].copy_from_slice(&self.len);
        out[12..].copy_from_slice(&self.constants);
        out
    }

    /// The 64 bytes in native byte order, for `vkCmdPushConstants`.
    pub fn bytes(&self) -> [u8; PUSH_CONSTANT_BYTES as usize] {
        let mut out = [0; PUSH_CONSTANT_BYTES as usize];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.words()) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}

/// One binding of a dispatch, as [`check`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingInfo {
    /// Byte offset of the binding within its buffer (buffers themselves are at least 4-byte
    /// aligned): hal-local refuses a binding whose start is not 4-byte aligned.
    pub offset: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// Whether the device may write it (hal-local: the buffer has device write access and
    /// `DISPATCH_STORAGE_WRITE` usage, and is not a read-only import).
    pub writable: bool,
}

/// Whether hal-local would run a dispatch of kernel `name` with these push constants and
/// bindings: `Ok(())`, or exactly the error hal-local's dispatch returns, found by the same
/// checks in the same order as hal-local's kernel (the first failing check wins).
///
/// # Errors
///
/// [`Error::UnknownKernel`] for a name no kernel has (hal-local refuses it when the
/// executable is loaded), and [`Error::Kernel`] with the [`KernelError`] hal-local's kernel
/// returns, fields and all: a missing binding or push constants, a binding too small,
/// misaligned or read-only, or a shape message (`"matmul_f32: M, K and N must be non-zero"`,
/// `"matmul_f32: unknown flag bits"`, `"matmul_f32: matrix size overflows"`,
/// `"softmax_f32: rows and cols must be non-zero"`, `"softmax_f32: rows * cols overflows"`).
pub fn check(name: &str, constants: &[u32], bindings: &[BindingInfo]) -> Result<(), Error> {
    let d = Dispatch {
        constants,
        bindings,
    };
    match name {
        "fill_u32" => d.fill_u32(),
        "copy_u32" => d.copy_u32(),
        "add_f32" | "mul_f32" => d.binary(),
        "relu_f32" => d.relu_f32(),
        "matmul_f32" => d.matmul_f32(),
        "softmax_f32" => d.softmax_f32(),
        "noop" => Ok(()),
        _ => {
            return Err(Error::UnknownKernel {
                name: ShortName::new(name),
            })
        }
    }
    .map_err(Error::Kernel)
}

/// Size in bytes of one element.
const WORD: u64 = 4;

/// A dispatch as hal-local's kernels see it; each method mirrors the kernel of its name.
struct Dispatch<'a> {
    constants: &'a [u32],
    bindings: &'a [BindingInfo],
}

impl Dispatch<'_> {
    /// `util::constants::<N>`.
    fn constants<const N: usize>(&self) -> Result<[u32; N], KernelError> {
        let given = self
            .constants
            .get(..N)
            .ok_or(KernelError::MissingConstants {
                needed: N as u32,
                given: self.constants.len() as u32,
            })?;
        let mut out = [0; N];
        out.copy_from_slice(given);
        Ok(out)
    }

    /// `Workgroup::binding`.
    fn binding(&self, index: u32) -> Result<&BindingInfo, KernelError> {
        self.bindings
            .get(index as usize)
            .ok_or(KernelError::MissingBinding {
                index,
                bound: self.bindings.len() as u32,
            })
    }

    /// `Binding::f32s`: the element count, if the start is 4-byte aligned.
    fn elements_of(binding: &BindingInfo, index: u32) -> Result<u64, KernelError> {
        if binding.offset % WORD != 0 {
            return Err(KernelError::Misaligned {
                index,
                alignment: WORD as u32,
            });
        }
        Ok(binding.bytes / WORD)
    }

    /// `Workgroup::input_f32`: the element count.
    fn input(&self, index: u32) -> Result<u64, KernelError> {
        Self::elements_of(self.binding(index)?, index)
    }

    /// `Workgroup::output_f32`: the element count.
    fn output(&self, index: u32) -> Result<u64, KernelError> {
        let binding = self.binding(index)?;
        if !binding.writable {
            return Err(KernelError::ReadOnly { index });
        }
        Self::elements_of(binding, index)
    }

    /// `util::ensure_len`: binding `index` (of `have` elements) holds `count` elements.
    fn ensure_len(&self, index: u32, have: u64, count: u64) -> Result<(), KernelError> {
        if have >= count {
            Ok(())
        } else {
            Err(KernelError::BindingTooSmall {
                index,
                len: self.bindings.get(index as usize).map_or(0, |b| b.bytes),
                needed: count.saturating_mul(WORD),
            })
        }
    }

    fn fill_u32(&self) -> Result<(), KernelError> {
        let [_value] = self.constants::<1>()?;
        self.output(0)?;
        Ok(())
    }

    fn copy_u32(&self) -> Result<(), KernelError> {
        let src = self.input(0)?;
        let dst = self.output(1)?;
        self.ensure_len(0, src, dst)
    }

    /// `add_f32` and `mul_f32`.
    fn binary(&self) -> Result<(), KernelError> {
        let a = self.input(0)?;
        let b = self.input(1)?;
        let n = self.output(2)?;
        self.ensure_len(0, a, n)?;
        self.ensure_len(1, b, n)
    }

    fn relu_f32(&self) -> Result<(), KernelError> {
        let input = self.input(0)?;
        let n = self.output(1)?;
        self.ensure_len(0, input, n)
    }

    fn matmul_f32(&self) -> Result<(), KernelError> {
        let [m, k, n] = self.constants::<3>()?;
        let flags = self.constants.get(3).copied().unwrap_or(0);
        if m == 0 || k == 0 || n == 0 {
            return Err(KernelError::Shape(
                "matmul_f32: M, K and N must be non-zero",
            ));
        }
        if flags & !(FLAG_BIAS | FLAG_RELU) != 0 {
            return Err(KernelError::Shape("matmul_f32: unknown flag bits"));
        }
        let overflow = "matmul_f32: matrix size overflows";
        let mk = elements(m, k, overflow)?;
        let kn = elements(k, n, overflow)?;
        let mn = elements(m, n, overflow)?;
        let a = self.input(0)?;
        self.ensure_len(0, a, mk)?;
        let b = self.input(1)?;
        self.ensure_len(1, b, kn)?;
        let c = self.output(2)?;
        self.ensure_len(2, c, mn)?;
        if flags & FLAG_BIAS != 0 {
            let bias = self.input(3)?;
            self.ensure_len(3, bias, u64::from(n))?;
        }
        Ok(())
    }

    fn softmax_f32(&self) -> Result<(), KernelError> {
        let [rows, cols] = self.constants::<2>()?;
        if rows == 0 || cols == 0 {
            return Err(KernelError::Shape(
                "softmax_f32: rows and cols must be non-zero",
            ));
        }
        let count = elements(rows, cols, "softmax_f32: rows * cols overflows")?;
        let input = self.input(0)?;
        let out = self.output(1)?;
        self.ensure_len(0, input, count)?;
        self.ensure_len(1, out, count)
    }
}

/// `util::elements`: `rows * cols`, refused with `what` unless its size in bytes fits both
/// `u64` and this host's address space (`usize`), as hal-local checks it.
fn elements(rows: u32, cols: u32, what: &'static str) -> Result<u64, KernelError> {
    let count = u64::from(rows) * u64::from(cols);
    count
        .checked_mul(WORD)
        .and_then(|bytes| usize::try_from(bytes).ok())
        .and_then(|_| usize::try_from(count).ok())
        .map(|_| count)
        .ok_or(KernelError::Shape(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_found() {
        let names = [
            "fill_u32",
            "copy_u32",
            "add_f32",
            "mul_f32",
            "relu_f32",
            "matmul_f32",
            "softmax_f32",
            "noop",
        ];
        assert_eq!(KERNELS.len(), names.len());
        for (k, name) in KERNELS.iter().zip(names) {
            assert_eq!(k.name, name);
            assert!(core::ptr::eq(find(name).expect("listed"), k));
            assert_eq!(k.entry, "main");
            // SPIR-V magic number, then version 1.0.
            assert_eq!(k.words[0], 0x0723_0203, "{name}");
            assert_eq!(k.words[1], 0x0001_0000, "{name}");
        }
        assert!(find("nope").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn push_constant_layout() {
        let pc = PushConstants::new(
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
            &[10, 11],
            &[20, 21, 22, 23, 24],
        );
        assert_eq!(
            pc.words(),
            [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 0, 0, 20, 21, 22, 23]
        );
        let bytes = pc.bytes();
        assert_eq!(bytes.len(), PUSH_CONSTANT_BYTES as usize);
        assert_eq!(bytes[12 * 4..13 * 4], 20u32.to_ne_bytes());
    }

    /// Every constant `exp_f32` uses is hal-local's (same bits), and reaches the SPIR-V.
    #[test]
    fn exp_constants_match_hal_local_and_reach_the_spirv() {
        let expected = [
            ("EXP_LOG2_E", core::f32::consts::LOG2_E.to_bits()),
            ("EXP_LN2_HI", 0x3F31_7200),
            ("EXP_LN2_LO", 0x35BF_BE8E),
            ("EXP_ROUND_SHIFTER", 12_582_912.0f32.to_bits()),
            ("EXP_OVERFLOW_ABOVE", 88.722_84f32.to_bits()),
            ("EXP_UNDERFLOW_BELOW", (-103.972_08f32).to_bits()),
            ("EXP_ONE", 1.0f32.to_bits()),
            ("EXP_C2", 0.5f32.to_bits()),
            ("EXP_C3", (1.0f32 / 6.0).to_bits()),
            ("EXP_C4", (1.0f32 / 24.0).to_bits()),
            ("EXP_C5", (1.0f32 / 120.0).to_bits()),
            ("EXP_C6", (1.0f32 / 720.0).to_bits()),
            ("EXP_C7", (1.0f32 / 5040.0).to_bits()),
        ];
        assert_eq!(spirv::EXP_CONSTANTS, expected);
        let words = find("softmax_f32").expect("softmax").words;
        for (name, bits) in expected {
            // OpConstant: 4 words, opcode 43, then result type, result id, value.
            let found = words
                .windows(4)
                .any(|w| w[0] == (4 << 16 | 43) && w[3] == bits);
            assert!(
                found,
                "{name} ({bits:#x}) is not an OpConstant of softmax_f32"
            );
        }
    }

    /// Every float arithmetic result carries `NoContraction`.
    #[test]
    fn float_operations_are_not_contracted() {
        for k in KERNELS {
            let mut decorated = Vec::new();
            let mut results = Vec::new();
            let mut at = 5;
            while at < k.words.len() {
                let count = (k.words[at] >> 16) as usize;
                let op = k.words[at] & 0xFFFF;
                if op == 71 && count == 3 && k.words[at + 2] == 42 {
                    decorated.push(k.words[at + 1]);
                }
                if [129, 131, 133, 136].contains(&op) {
                    results.push(k.words[at + 2]);
                }
                at += count;
            }
            for id in &results {
                assert!(
                    decorated.contains(id),
                    "{}: %{id} not NoContraction",
                    k.name
                );
            }
            if ["add_f32", "mul_f32", "matmul_f32", "softmax_f32"].contains(&k.name) {
                assert!(!results.is_empty(), "{}", k.name);
            }
        }
    }

    #[test]
    fn unknown_names() {
        assert!(matches!(
            check("nope", &[], &[]),
            Err(Error::UnknownKernel { .. })
        ));
        assert_eq!(check("noop", &[1, 2], &[]), Ok(()));
    }
}
