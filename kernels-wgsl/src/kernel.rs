//! One kernel of the Vulkan driver: its SPIR-V, its bindings, what checks its dispatches,
//! its grid, and the 128-byte push block every kernel reads (`common.wgsl`).

use ember_kernels::{BindingUse, KernelError};
use hal_core::contract::{BindingFacts, Contract};

/// Size in bytes of every kernel's push-constant range (32 words).
pub const PUSH_CONSTANT_BYTES: u32 = 128;

/// Words in a kernel's push block.
const PUSH_WORDS: usize = PUSH_CONSTANT_BYTES as usize / 4;

/// Bindings a kernel's push block gives a byte offset (words 0..=5), where the kernel has
/// at most that many; one with more (`concatenation`: 11) has a word for each.
pub const BASE_WORDS: usize = 6;

/// Parameter words the push block holds after [`BASE_WORDS`] offsets (words 6..=31).
pub const MAX_PARAMS: usize = PUSH_WORDS - BASE_WORDS;

/// Most workgroups a dispatch on the kernel's own grid gets along x (Vulkan's guaranteed
/// `maxComputeWorkGroupCount[0]`); the kernels stride over what is left.
const MAX_GROUPS: u64 = 65_535;

/// What a kernel's dispatches are checked against: its specification in `ember-kernels`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spec {
    /// A built-in kernel's contract (`ember_kernels::builtin`): the dispatch's constants,
    /// and its bindings' presence, access, alignment and sizes, in the contract's order.
    Contract(&'static Contract),
    /// An op's parameters (`ember_kernels::KernelParams`): decodes the words and checks the
    /// bindings' lengths (bytes) against them, as hal-local's kernel does first; returns how
    /// many words the parameters took. Each binding's presence, write access and alignment
    /// are checked after it, from [`SpirvKernel::bindings`].
    Params(fn(&[u32], &[usize]) -> Result<usize, KernelError>),
    /// A built-in kernel that also takes an op's parameters (`add_f32`, `mul_f32`: TFLite's
    /// float ADD and MUL): without constants its contract, as [`Spec::Contract`]; given
    /// constants, the op's parameters, as [`Spec::Params`].
    ContractOrParams(
        &'static Contract,
        fn(&[u32], &[usize]) -> Result<usize, KernelError>,
    ),
}

/// A kernel's SPIR-V and what the driver needs to check and run it.
#[derive(Debug, Clone, Copy)]
pub struct SpirvKernel {
    /// The kernel's name, as `ember-kernels` and modules spell it.
    pub name: &'static str,
    /// The compute entry point: always `main`.
    pub entry: &'static str,
    /// The SPIR-V module, as 32-bit words.
    pub words: &'static [u32],
    /// Its bindings, in order: set 0, binding `i`; an op's are its parameters' specification
    /// (`ember_kernels::KernelParams::BINDINGS`). For a kernel whose output is the dispatch's
    /// last binding ([`output_last`](Self::output_last)), the most it binds.
    pub bindings: &'static [BindingUse],
    /// Whether the kernel binds a variable count of inputs, each as `bindings[0]`, then its
    /// output, the dispatch's last binding, as `bindings`' last (hal-local's `Writes::Last`;
    /// the parameters' check holds the count to theirs).
    pub output_last: bool,
    /// Invocations that share one output word, from the parameter words: 1, or a power of
    /// two up to [`WORKGROUP_SIZE`](crate::WORKGROUP_SIZE) where they split long sums over
    /// few outputs. The kernel makes the same choice from the same words; the result does
    /// not depend on it, only the speed.
    pub lanes_per_word: fn(&[u32]) -> u32,
    /// For a kernel whose workgroups each take whole tiles of the output (rather than
    /// striding over its words): the tiles, from the parameter words and the output's byte
    /// offset in its range, one workgroup each.
    pub tiles: Option<fn(&[u32], u64) -> u64>,
    /// What its dispatches are checked against.
    pub(crate) spec: Spec,
}

impl SpirvKernel {
    /// Checks a dispatch as hal-local's kernel of the same name would before running it:
    /// a built-in kernel against its contract; an op's parameters and lengths, then each
    /// binding's presence, write access and alignment. Returns how many parameter words the
    /// kernel reads (more than [`max_params`](Self::max_params) cannot be pushed: the driver
    /// refuses those).
    pub fn check(
        &self,
        constants: &[u32],
        bindings: &[BindingFacts],
    ) -> Result<usize, KernelError> {
        let by_contract = |contract: &Contract| {
            contract.check(constants, bindings)?;
            Ok(constants.len().min(contract.constants.len()))
        };
        let params = match self.spec {
            Spec::Contract(contract) => return by_contract(contract),
            Spec::ContractOrParams(contract, _) if constants.is_empty() => {
                return by_contract(contract)
            }
            Spec::Params(params) | Spec::ContractOrParams(_, params) => params,
        };
        let lens: Vec<usize> = bindings
            .iter()
            .map(|b| usize::try_from(b.len).unwrap_or(usize::MAX))
            .collect();
        let used = params(constants, &lens)?;
        let bound = if self.output_last {
            bindings.len()
        } else {
            self.bindings.len()
        };
        for i in 0..bound {
            let want = self.binding(i, bound);
            let index = i as u32;
            let fact = bindings.get(i).ok_or(KernelError::MissingBinding {
                index,
                bound: bindings.len() as u32,
            })?;
            if want.written && !fact.writable {
                return Err(KernelError::ReadOnly { index });
            }
            if fact.offset % u64::from(want.element) != 0 {
                return Err(KernelError::Misaligned {
                    index,
                    alignment: want.element,
                });
            }
        }
        Ok(used)
    }

    /// What the kernel makes of binding `i` of a dispatch that binds `bound`.
    fn binding(&self, i: usize, bound: usize) -> BindingUse {
        match (self.output_last, self.bindings) {
            (true, [input, .., output]) => {
                if i + 1 == bound {
                    *output
                } else {
                    *input
                }
            }
            _ => self.bindings[i],
        }
    }

    /// The built-in kernel's contract (`ember_kernels::builtin`), or `None` for an op.
    pub fn contract(&self) -> Option<&'static Contract> {
        match self.spec {
            Spec::Contract(contract) | Spec::ContractOrParams(contract, _) => Some(contract),
            Spec::Params(_) => None,
        }
    }

    /// Whether the kernel runs on the dispatch's own grid, splitting its work over the
    /// workgroups as hal-local's `Workgroup::share_of` does (the built-in kernels), rather
    /// than on [`grid`](Self::grid)'s (the op set).
    pub fn runs_on_dispatch_grid(&self) -> bool {
        self.contract().is_some()
    }

    /// Whether the driver binds each binding's range rounded up to whole words (the op set
    /// reads and writes the words that hold its bytes), rather than exactly (a built-in
    /// kernel counts a binding's whole words from its bound range, `arrayLength`, as
    /// hal-local ignores a trailing partial word).
    pub fn binds_whole_words(&self) -> bool {
        matches!(self.spec, Spec::Params(_))
    }

    /// The index of the binding the kernel writes, in a dispatch that binds `bound`.
    pub fn output(&self, bound: usize) -> usize {
        if self.output_last {
            bound.saturating_sub(1)
        } else {
            self.bindings.iter().position(|b| b.written).unwrap_or(0)
        }
    }

    /// The push block's word where the parameter words start: one offset word per binding
    /// before it, at least [`BASE_WORDS`].
    pub fn params_at(&self) -> usize {
        self.bindings.len().max(BASE_WORDS)
    }

    /// The most parameter words a dispatch of the kernel can push.
    pub fn max_params(&self) -> usize {
        PUSH_WORDS - self.params_at()
    }
}

impl SpirvKernel {
    /// The grid a dispatch of an op runs on, whatever grid the module gave: [`lanes_per_word`]
    /// invocations per word of the output (`base` bytes into its range, `len` bytes long),
    /// or a workgroup per tile where the kernel has [`tiles`]; at most 65,535 workgroups.
    /// The kernels' results do not depend on it.
    ///
    /// [`lanes_per_word`]: Self::lanes_per_word
    /// [`tiles`]: Self::tiles
    pub fn grid(&self, constants: &[u32], base: u64, len: u64) -> [u32; 3] {
        let groups = match self.tiles {
            Some(tiles) => tiles(constants, base),
            None => {
                let words = (base % 4 + len).div_ceil(4);
                let lanes = words.saturating_mul(u64::from((self.lanes_per_word)(constants)));
                lanes.div_ceil(u64::from(crate::WORKGROUP_SIZE))
            }
        };
        [groups.clamp(1, MAX_GROUPS) as u32, 1, 1]
    }
}

/// The push block of a dispatch: words `0..params_at`, the byte offset of binding `i` inside
/// its bound descriptor range; then the parameter words (missing ones 0). Generic SPIR-V gets
/// the same block with its parameters at word [`BASE_WORDS`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushConstants {
    words: [u32; PUSH_WORDS],
}

impl PushConstants {
    /// The block for a dispatch of `kernel`: `bases[i]` for its bindings (those past
    /// [`SpirvKernel::params_at`] dropped) and its first [`SpirvKernel::max_params`] parameter
    /// words. A built-in kernel's optional constants the dispatch leaves out get the value
    /// its contract gives them (`softmax_f32`'s `beta`: 1.0), as its check parses them.
    pub fn new(kernel: &SpirvKernel, bases: &[u32], params: &[u32]) -> Self {
        let at = kernel.params_at();
        let mut block = Self::at(at, bases, params);
        if let Some(contract) = kernel.contract() {
            let absent = contract.constants.iter().enumerate().skip(params.len());
            for (i, constant) in absent {
                if let Some(word) = block.words.get_mut(at + i) {
                    *word = constant.absent();
                }
            }
        }
        block
    }

    /// The block for a dispatch of generic SPIR-V: `bases[i]` for its first [`BASE_WORDS`]
    /// bindings, then its first [`MAX_PARAMS`] parameter words.
    pub fn generic(bases: &[u32], params: &[u32]) -> Self {
        Self::at(BASE_WORDS, bases, params)
    }

    fn at(params_at: usize, bases: &[u32], params: &[u32]) -> Self {
        let mut words = [0; PUSH_WORDS];
        let (base, rest) = words.split_at_mut(params_at);
        for (to, from) in base.iter_mut().zip(bases) {
            *to = *from;
        }
        for (to, from) in rest.iter_mut().zip(params) {
            *to = *from;
        }
        Self { words }
    }

    /// The 32 words in order.
    pub fn words(&self) -> [u32; PUSH_WORDS] {
        self.words
    }

    /// The 128 bytes in native byte order, for `vkCmdPushConstants`.
    pub fn bytes(&self) -> [u8; PUSH_CONSTANT_BYTES as usize] {
        let mut out = [0; PUSH_CONSTANT_BYTES as usize];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}
