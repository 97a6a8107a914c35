//! A module's function as a static program (`hal_local::program`): every value — the
//! inputs, the outputs and the intermediates — given an offset in one arena by the same
//! planner the module's own plan uses, every binding resolved to a span of that arena or of
//! the constant pool, and every dispatch run once on the host through the kernels hal-local
//! links, so a dispatch a kernel would refuse fails the build rather than the firmware.
//!
//! Inputs live from before the first step to their last use, outputs from the step that
//! first writes them to after the last, so an input's bytes are reused once it is read and
//! the caller needs no buffers of its own: it writes the inputs into the arena and reads
//! the outputs from it.

use crate::patch::PatchStage;
use hal_core::module::plan::{plan, Lifetime};
use hal_core::module::{Module, Operand, Step, Value};
use hal_local::kernel::Kernel;
use hal_local::program::{self, Span};

/// The arena's alignment, and every value's: enough for every element type and the
/// Cortex-M kernels' word loads.
pub const ARENA_ALIGN: u64 = 16;

/// One step, owning its words and spans ([`ProgramPlan::steps`] borrows them as
/// `hal_local::program::Step`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedStep {
    /// A dispatch of executable `executable`.
    Dispatch {
        /// The executable (an index into [`ProgramPlan::kernels`]).
        executable: u16,
        /// Workgroups per dimension.
        workgroups: [u32; 3],
        /// Push constants.
        constants: Vec<u32>,
        /// Bindings, in order.
        bindings: Vec<Span>,
        /// Scratch lent to the kernel for this step ([`Span::NONE`] where it asks for
        /// none).
        scratch: Span,
    },
    /// A copy.
    Copy {
        /// Where from.
        source: Span,
        /// Where to (the arena).
        target: Span,
    },
    /// A fill.
    Fill {
        /// Where (the arena).
        target: Span,
        /// The word.
        pattern: u32,
    },
}

/// A function planned as a static program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramPlan {
    /// The function's name.
    pub function: String,
    /// Bytes of the one arena (a multiple of [`ARENA_ALIGN`]).
    pub arena_bytes: u64,
    /// Each input's span of the arena, in the function's order.
    pub inputs: Vec<Span>,
    /// Each output's span of the arena.
    pub outputs: Vec<Span>,
    /// The steps, barriers dropped (the program runs them in order on one thread).
    pub steps: Vec<PlannedStep>,
    /// The kernel each executable names, in executable order.
    pub kernels: Vec<String>,
    /// What the module's own plan needs besides: its arena plus every input and output.
    pub separate_bytes: u64,
    /// The stages computed patch by patch, in the order the planner chose them (each
    /// lowered the arena further).
    pub patches: Vec<PatchStage>,
}

impl ProgramPlan {
    /// The steps, as `hal_local::program::run` takes them.
    pub fn steps(&self) -> Vec<program::Step<'_>> {
        self.steps
            .iter()
            .map(|step| match step {
                PlannedStep::Dispatch {
                    executable,
                    workgroups,
                    constants,
                    bindings,
                    scratch,
                } => program::Step::Dispatch {
                    executable: *executable,
                    workgroups: *workgroups,
                    constants,
                    bindings,
                    scratch: *scratch,
                },
                PlannedStep::Copy { source, target } => program::Step::Copy {
                    source: *source,
                    target: *target,
                },
                PlannedStep::Fill { target, pattern } => program::Step::Fill {
                    target: *target,
                    pattern: *pattern,
                },
            })
            .collect()
    }

    /// Bytes of the largest scratch a step lends its kernel (0 where none does): a kernel
    /// that runs without it keeps that much on its stack instead.
    pub fn largest_scratch(&self) -> u64 {
        let lent = self.steps.iter().map(|step| match step {
            PlannedStep::Dispatch { scratch, .. } => u64::from(scratch.length),
            _ => 0,
        });
        lent.max().unwrap_or(0)
    }

    /// hal-local's kernel for each executable (its TFLite op set and built-ins, by name);
    /// `None` if an executable names a kernel hal-local does not have.
    pub fn local_kernels(&self) -> Option<Vec<Kernel>> {
        self.kernels.iter().map(|name| local_kernel(name)).collect()
    }

    /// Runs the program once on the host over a zeroed arena with `kernels` (one per
    /// executable), each input (where given) written into its span first: every kernel
    /// checks its dispatch's parameters and bindings as it does on the device. Returns each
    /// output's bytes.
    pub fn run(
        &self,
        kernels: &[Kernel],
        pool: &[u8],
        inputs: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, program::ProgramError> {
        self.run_steps(&self.steps(), kernels, pool, inputs)
    }

    /// [`run`](Self::run) with each dispatch that firmware may call directly (an int8
    /// convolution, depthwise convolution or fully connected layer over one workgroup) a
    /// direct call (`hal_local::direct`) instead, as the generated program makes it.
    pub fn run_direct(
        &self,
        kernels: &[Kernel],
        pool: &[u8],
        inputs: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, program::ProgramError> {
        let calls = self.planned_calls();
        let steps: Vec<program::Step<'_>> = self
            .steps()
            .into_iter()
            .zip(&calls)
            .map(|(step, call)| match call {
                Some(call) => program::Step::Call(call),
                None => step,
            })
            .collect();
        self.run_steps(&steps, kernels, pool, inputs)
    }

    /// How many dispatches [`run_direct`](Self::run_direct) makes direct calls.
    pub fn direct_calls(&self) -> usize {
        self.planned_calls().iter().flatten().count()
    }

    /// Each step's direct call, where it may be one.
    fn planned_calls(&self) -> Vec<Option<crate::direct::PlannedCall>> {
        self.steps
            .iter()
            .map(|step| match step {
                PlannedStep::Dispatch {
                    executable,
                    workgroups,
                    constants,
                    bindings,
                    scratch,
                } => {
                    let kernel = self.kernels.get(usize::from(*executable))?;
                    crate::direct::plan(kernel, *workgroups, constants, bindings, *scratch)
                }
                _ => None,
            })
            .collect()
    }

    /// `steps` over a fresh arena holding `inputs`: the outputs.
    fn run_steps(
        &self,
        steps: &[program::Step<'_>],
        kernels: &[Kernel],
        pool: &[u8],
        inputs: &[&[u8]],
    ) -> Result<Vec<Vec<u8>>, program::ProgramError> {
        // Three bytes more than the arena, so it can start 4-byte aligned.
        let bytes = self.arena_bytes as usize;
        let mut buffer = vec![0u8; bytes + 3];
        let skip = buffer.as_ptr().align_offset(4);
        let arena = &mut buffer[skip..skip + bytes];
        for (span, input) in self.inputs.iter().zip(inputs) {
            let range = span.range();
            let len = range.len().min(input.len());
            arena[range][..len].copy_from_slice(&input[..len]);
        }
        program::run(steps, kernels, arena, pool)?;
        Ok(self
            .outputs
            .iter()
            .map(|span| arena[span.range()].to_vec())
            .collect())
    }
}

/// hal-local's kernel named `name`: of its TFLite op set, or a built-in.
pub fn local_kernel(name: &str) -> Option<Kernel> {
    let tables = [
        (hal_local::kernels::TFLITE, hal_local::kernels::TFLITE_PATHS),
        (
            hal_local::kernels::BUILTIN,
            hal_local::kernels::BUILTIN_PATHS,
        ),
    ];
    tables.into_iter().find_map(|(kernels, paths)| {
        let at = paths.iter().position(|k| k.name == name)?;
        kernels.get(at).copied()
    })
}

/// Why a function cannot be a static program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// The module has no function of that name (or none at all).
    NoFunction(String),
    /// A step refers to a value or executable the module lacks, or a span past 4 GiB.
    Malformed {
        /// The step.
        step: usize,
    },
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::NoFunction(name) if name.is_empty() => {
                f.write_str("the module has no function")
            }
            PlanError::NoFunction(name) => write!(f, "the module has no function `{name}`"),
            PlanError::Malformed { step } => write!(
                f,
                "step {step} refers to a value, constant or executable the module lacks"
            ),
        }
    }
}

/// Plans `module`'s function `function` (its first function where `None`) as a static
/// program, every layer whole.
pub fn plan_program(module: &Module<'_>, function: Option<&str>) -> Result<ProgramPlan, PlanError> {
    plan_program_with(module, function, Patches::Off)
}

/// Plans `module`'s function `function` (its first function where `None`) as a static
/// program; with [`Patches::Smallest`], with the patch-based stages
/// ([`patch`](crate::patch)) that lower its arena most.
pub fn plan_program_with(
    module: &Module<'_>,
    function: Option<&str>,
    patches: Patches,
) -> Result<ProgramPlan, PlanError> {
    let def = match function {
        Some(name) => module
            .function(name)
            .map(|(_, def)| def)
            .ok_or_else(|| PlanError::NoFunction(name.to_owned()))?,
        None => module
            .functions()
            .iter()
            .next()
            .ok_or_else(|| PlanError::NoFunction(String::new()))?,
    };
    let listing = Listing::of(module, &def)?;
    let kernels: Vec<String> = module
        .executables()
        .iter()
        .map(|e| e.kernel.to_owned())
        .collect();
    let plain = place(&listing, &kernels)?;
    let aligned = |n: u64| n.div_ceil(ARENA_ALIGN) * ARENA_ALIGN;
    let separate_bytes = aligned(def.arena_size)
        + listing.values[..listing.arguments + listing.results]
            .iter()
            .map(|&n| aligned(n))
            .sum::<u64>();
    let finish = |placed: Placed, patches: Vec<PatchStage>| ProgramPlan {
        function: def.name.to_owned(),
        arena_bytes: placed.arena_bytes,
        inputs: placed.inputs,
        outputs: placed.outputs,
        steps: placed.steps,
        kernels: kernels.clone(),
        separate_bytes,
        patches,
    };
    if patches == Patches::Off {
        return Ok(finish(plain, Vec::new()));
    }
    // Greedy: the stage that lowers the arena most, then again on what is left, while
    // the arena falls.
    let plain_arena_bytes = plain.arena_bytes;
    let (mut listing, mut placed, mut stages) = (listing, plain, Vec::new());
    loop {
        // Ranked by the arena, then by the most the stage's own steps need (so a later
        // stage can lower the arena further), then by the steps it runs.
        let mut best: Option<((u64, u64, usize), Placed, crate::patch::Candidate)> = None;
        for candidate in crate::patch::candidates(&listing, &kernels) {
            let trial = place(&candidate.listing, &kernels)?;
            let stage = candidate.ops.clone();
            let rank = (
                trial.arena_bytes,
                trial.step_peaks[stage].iter().copied().max().unwrap_or(0),
                candidate.stage.steps,
            );
            let better = match &best {
                Some((best_rank, _, _)) => rank < *best_rank,
                None => trial.arena_bytes < placed.arena_bytes,
            };
            if better {
                best = Some((rank, trial, candidate));
            }
        }
        let Some((_, trial, mut candidate)) = best else {
            break;
        };
        candidate.stage.plain_arena_bytes = plain_arena_bytes;
        candidate.stage.arena_bytes = trial.arena_bytes;
        stages.push(candidate.stage);
        (listing, placed) = (candidate.listing, trial);
    }
    Ok(finish(placed, stages))
}

/// Whether a program may compute a stage of its layers patch by patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Patches {
    /// Every layer whole.
    #[default]
    Off,
    /// The patch-based stages that lower the arena most, where any does.
    Smallest,
}

/// Where an operand lies before planning: a value of the listing or the constant pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Value `n` of [`Listing::values`].
    Value(usize),
    /// The constant pool, from this byte.
    Pool(u64),
}

/// An operand before planning: `length` bytes from `offset` of its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ref {
    pub place: Place,
    pub offset: u64,
    pub length: u64,
}

impl Ref {
    /// The whole of value `value`, `size` bytes.
    pub fn whole(value: usize, size: u64) -> Self {
        Self {
            place: Place::Value(value),
            offset: 0,
            length: size,
        }
    }

    /// The value this operand lies in, if any.
    pub fn value(&self) -> Option<usize> {
        match self.place {
            Place::Value(n) => Some(n),
            Place::Pool(_) => None,
        }
    }
}

/// A step before planning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    Dispatch {
        executable: u16,
        workgroups: [u32; 3],
        constants: Vec<u32>,
        bindings: Vec<Ref>,
    },
    Copy {
        source: Ref,
        target: Ref,
    },
    Fill {
        target: Ref,
        pattern: u32,
    },
}

impl Op {
    /// The operands the step reads or writes.
    pub fn operands(&self) -> Vec<Ref> {
        match self {
            Op::Dispatch { bindings, .. } => bindings.clone(),
            Op::Copy { source, target } => vec![*source, *target],
            Op::Fill { target, .. } => vec![*target],
        }
    }
}

/// A function's steps over its values, before planning. Each value is its size in bytes:
/// the arguments, then the results, then every other value (the function's transients,
/// and the buffers a patch-based stage adds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listing {
    pub values: Vec<u64>,
    pub arguments: usize,
    pub results: usize,
    pub ops: Vec<Op>,
    /// The function's step (barriers counted) each op comes from.
    pub origins: Vec<usize>,
}

impl Listing {
    /// `def`'s steps, barriers dropped, over its values.
    fn of(module: &Module<'_>, def: &hal_core::module::FunctionDef<'_>) -> Result<Self, PlanError> {
        let arguments: Vec<u64> = def.arguments.iter().collect();
        let results: Vec<u64> = def.results.iter().collect();
        let transients = def.transients.iter().map(|t| t.size);
        let values: Vec<u64> = arguments
            .iter()
            .chain(&results)
            .copied()
            .chain(transients)
            .collect();
        let pool: Vec<u64> = module.constants().iter().map(|c| c.data.offset).collect();
        let (first_result, first_transient) = (arguments.len(), arguments.len() + results.len());
        let operand = |operand: Operand, at: usize| -> Result<Ref, PlanError> {
            let malformed = PlanError::Malformed { step: at };
            let place = match operand.value {
                Value::Constant(n) => Place::Pool(*pool.get(n as usize).ok_or(malformed.clone())?),
                Value::Argument(n) => Place::Value(n as usize),
                Value::Result(n) => Place::Value(first_result + n as usize),
                Value::Transient(n) => Place::Value(first_transient + n as usize),
            };
            let in_range = match (operand.value, place) {
                (Value::Argument(_), Place::Value(n)) => n < first_result,
                (Value::Result(_), Place::Value(n)) => n < first_transient,
                (Value::Transient(_), Place::Value(n)) => n < values.len(),
                _ => true,
            };
            if !in_range {
                return Err(malformed);
            }
            Ok(Ref {
                place,
                offset: operand.offset,
                length: operand.length,
            })
        };
        let (mut ops, mut origins) = (Vec::new(), Vec::new());
        for (at, step) in def.steps.iter().enumerate() {
            if !matches!(step, Step::Barrier) {
                origins.push(at);
            }
            ops.push(match step {
                Step::Dispatch {
                    executable,
                    workgroups,
                    constants,
                    bindings,
                } => Op::Dispatch {
                    executable: u16::try_from(executable)
                        .ok()
                        .filter(|&e| u32::from(e) < module.executables().len())
                        .ok_or(PlanError::Malformed { step: at })?,
                    workgroups,
                    constants: constants.iter().collect(),
                    bindings: bindings
                        .iter()
                        .map(|b| operand(b, at))
                        .collect::<Result<_, _>>()?,
                },
                Step::Copy { source, target } => Op::Copy {
                    source: operand(source, at)?,
                    target: operand(target, at)?,
                },
                Step::Fill { target, pattern } => Op::Fill {
                    target: operand(target, at)?,
                    pattern,
                },
                Step::Barrier => continue,
            });
        }
        Ok(Self {
            values,
            arguments: arguments.len(),
            results: results.len(),
            ops,
            origins,
        })
    }
}

/// A listing placed in one arena.
struct Placed {
    arena_bytes: u64,
    /// The end of the highest value live at each step.
    step_peaks: Vec<u64>,
    inputs: Vec<Span>,
    outputs: Vec<Span>,
    steps: Vec<PlannedStep>,
}

/// Gives every value of `listing` its offset in one arena (inputs live from before the
/// first step to their last use, outputs from their first write to after the last step,
/// a kernel's scratch for its own step) and resolves every operand to a span.
fn place(listing: &Listing, kernels: &[String]) -> Result<Placed, PlanError> {
    let end = listing.ops.len() as u32;
    let mut lifetimes: Vec<Option<(u32, u32)>> = vec![None; listing.values.len()];
    for life in lifetimes.iter_mut().take(listing.arguments) {
        *life = Some((0, 0));
    }
    for (at, op) in listing.ops.iter().enumerate() {
        for value in op.operands().iter().filter_map(Ref::value) {
            let at = at as u32;
            let life = lifetimes[value].get_or_insert((at, at));
            life.0 = life.0.min(at);
            life.1 = life.1.max(at);
        }
    }
    for life in lifetimes
        .iter_mut()
        .skip(listing.arguments)
        .take(listing.results)
    {
        let first = life.map_or(end, |(first, _)| first);
        *life = Some((first, end));
    }
    // Scratch a kernel asks to be lent lives for its own step only.
    let mut sizes = listing.values.clone();
    let mut scratch_value = vec![None; listing.ops.len()];
    for (at, op) in listing.ops.iter().enumerate() {
        if let Op::Dispatch {
            executable,
            constants,
            ..
        } = op
        {
            let kernel = kernels
                .get(usize::from(*executable))
                .map_or("", String::as_str);
            let bytes = hal_local::kernels::tflite::scratch_bytes(kernel, constants) as u64;
            if bytes > 0 {
                scratch_value[at] = Some(sizes.len());
                sizes.push(bytes);
                lifetimes.push(Some((at as u32, at as u32)));
            }
        }
    }
    let values: Vec<Lifetime> = sizes
        .iter()
        .zip(&lifetimes)
        .map(|(&size, life)| match life {
            Some((first, last)) => Lifetime {
                size: size.max(1),
                first: *first,
                last: *last,
            },
            // A value no step uses takes no bytes.
            None => Lifetime {
                size: 0,
                first: 0,
                last: 0,
            },
        })
        .collect();
    let planned = plan(&values, ARENA_ALIGN);
    let mut step_peaks = vec![0u64; listing.ops.len()];
    for (value, offset) in values.iter().zip(&planned.offsets) {
        let last = (value.last as usize).min(step_peaks.len().saturating_sub(1));
        for peak in step_peaks
            .iter_mut()
            .take(last + 1)
            .skip(value.first as usize)
        {
            *peak = (*peak).max(offset + value.size);
        }
    }
    let span = |operand: Ref, at: usize| -> Result<Span, PlanError> {
        let malformed = || PlanError::Malformed { step: at };
        let (base, arena) = match operand.place {
            Place::Pool(offset) => (offset, false),
            Place::Value(n) => (planned.offsets[n], true),
        };
        let offset = u32::try_from(base + operand.offset).map_err(|_| malformed())?;
        let length = u32::try_from(operand.length).map_err(|_| malformed())?;
        Ok(if arena {
            Span::arena(offset, length)
        } else {
            Span::pool(offset, length)
        })
    };
    let mut steps = Vec::with_capacity(listing.ops.len());
    for (at, op) in listing.ops.iter().enumerate() {
        steps.push(match op {
            Op::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
            } => PlannedStep::Dispatch {
                executable: *executable,
                workgroups: *workgroups,
                constants: constants.clone(),
                bindings: bindings
                    .iter()
                    .map(|b| span(*b, at))
                    .collect::<Result<_, _>>()?,
                scratch: match scratch_value[at] {
                    Some(n) => span(Ref::whole(n, sizes[n]), at)?,
                    None => Span::NONE,
                },
            },
            Op::Copy { source, target } => PlannedStep::Copy {
                source: span(*source, at)?,
                target: span(*target, at)?,
            },
            Op::Fill { target, pattern } => PlannedStep::Fill {
                target: span(*target, at)?,
                pattern: *pattern,
            },
        });
    }
    let whole = |n: usize| span(Ref::whole(n, listing.values[n]), 0);
    Ok(Placed {
        arena_bytes: planned.peak,
        step_peaks,
        inputs: (0..listing.arguments)
            .map(whole)
            .collect::<Result<_, _>>()?,
        outputs: (listing.arguments..listing.arguments + listing.results)
            .map(whole)
            .collect::<Result<_, _>>()?,
        steps,
    })
}
