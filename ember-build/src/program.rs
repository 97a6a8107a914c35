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
        program::run(&self.steps(), kernels, arena, pool)?;
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
/// program.
pub fn plan_program(module: &Module<'_>, function: Option<&str>) -> Result<ProgramPlan, PlanError> {
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
    let arguments: Vec<u64> = def.arguments.iter().collect();
    let results: Vec<u64> = def.results.iter().collect();
    let transients: Vec<u64> = def.transients.iter().map(|t| t.size).collect();
    let steps: Vec<Step<'_>> = def.steps.iter().collect();
    // Values in this order: arguments, results, transients.
    let index = |value: Value| -> Option<usize> {
        match value {
            Value::Argument(n) => (n as usize) < arguments.len(),
            Value::Result(n) => (n as usize) < results.len(),
            Value::Transient(n) => (n as usize) < transients.len(),
            Value::Constant(_) => false,
        }
        .then(|| match value {
            Value::Argument(n) => n as usize,
            Value::Result(n) => arguments.len() + n as usize,
            Value::Transient(n) => arguments.len() + results.len() + n as usize,
            Value::Constant(_) => 0,
        })
    };
    let end = steps.len() as u32;
    let mut lifetimes: Vec<Option<(u32, u32)>> =
        vec![None; arguments.len() + results.len() + transients.len()];
    // Inputs are written before the first step; outputs are read after the last.
    for life in lifetimes.iter_mut().take(arguments.len()) {
        *life = Some((0, 0));
    }
    for (at, step) in steps.iter().enumerate() {
        for operand in operands(step) {
            if let Some(i) = index(operand.value) {
                let at = at as u32;
                let life = lifetimes[i].get_or_insert((at, at));
                life.0 = life.0.min(at);
                life.1 = life.1.max(at);
            } else if !matches!(operand.value, Value::Constant(_)) {
                return Err(PlanError::Malformed { step: at });
            }
        }
    }
    for life in lifetimes
        .iter_mut()
        .skip(arguments.len())
        .take(results.len())
    {
        let first = life.map_or(end, |(first, _)| first);
        *life = Some((first, end));
    }
    // Scratch a kernel asks to be lent lives for its own step only.
    let executables: Vec<&str> = module.executables().iter().map(|e| e.kernel).collect();
    let mut scratch = Vec::new();
    for (at, step) in steps.iter().enumerate() {
        if let Step::Dispatch {
            executable,
            constants,
            ..
        } = step
        {
            let kernel = executables.get(*executable as usize).copied().unwrap_or("");
            let constants: Vec<u32> = constants.iter().collect();
            let bytes = hal_local::kernels::tflite::scratch_bytes(kernel, &constants) as u64;
            if bytes > 0 {
                scratch.push((at, bytes));
                lifetimes.push(Some((at as u32, at as u32)));
            }
        }
    }
    let scratch_sizes: Vec<u64> = scratch.iter().map(|&(_, bytes)| bytes).collect();
    let sizes = arguments
        .iter()
        .chain(&results)
        .chain(&transients)
        .chain(&scratch_sizes);
    let values: Vec<Lifetime> = sizes
        .zip(&lifetimes)
        .map(|(&size, life)| {
            let (first, last) = life.unwrap_or((0, 0));
            Lifetime {
                size: size.max(1),
                first,
                last,
            }
        })
        .collect();
    let planned = plan(&values, ARENA_ALIGN);
    let pool: Vec<(u64, u64)> = module
        .constants()
        .iter()
        .map(|c| (c.data.offset, c.data.length))
        .collect();
    let span = |operand: Operand, at: usize| -> Result<Span, PlanError> {
        let malformed = PlanError::Malformed { step: at };
        let (place_offset, arena) = match operand.value {
            Value::Constant(n) => (pool.get(n as usize).ok_or(malformed.clone())?.0, false),
            value => (
                planned.offsets[index(value).ok_or(malformed.clone())?],
                true,
            ),
        };
        let offset = u32::try_from(place_offset + operand.offset).map_err(|_| malformed.clone())?;
        let length = u32::try_from(operand.length).map_err(|_| malformed)?;
        Ok(if arena {
            Span::arena(offset, length)
        } else {
            Span::pool(offset, length)
        })
    };
    let first_scratch = arguments.len() + results.len() + transients.len();
    let scratch_of = |at: usize| -> Result<Span, PlanError> {
        let Some(n) = scratch.iter().position(|&(step, _)| step == at) else {
            return Ok(Span::NONE);
        };
        let offset = u32::try_from(planned.offsets[first_scratch + n]);
        let length = u32::try_from(scratch[n].1);
        match (offset, length) {
            (Ok(offset), Ok(length)) => Ok(Span::arena(offset, length)),
            _ => Err(PlanError::Malformed { step: at }),
        }
    };
    let mut planned_steps = Vec::with_capacity(steps.len());
    for (at, step) in steps.iter().enumerate() {
        planned_steps.push(match step {
            Step::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
            } => PlannedStep::Dispatch {
                executable: u16::try_from(*executable)
                    .ok()
                    .filter(|&e| u32::from(e) < module.executables().len())
                    .ok_or(PlanError::Malformed { step: at })?,
                workgroups: *workgroups,
                constants: constants.iter().collect(),
                bindings: bindings
                    .iter()
                    .map(|b| span(b, at))
                    .collect::<Result<_, _>>()?,
                scratch: scratch_of(at)?,
            },
            Step::Copy { source, target } => PlannedStep::Copy {
                source: span(*source, at)?,
                target: span(*target, at)?,
            },
            Step::Fill { target, pattern } => PlannedStep::Fill {
                target: span(*target, at)?,
                pattern: *pattern,
            },
            Step::Barrier => continue,
        });
    }
    let whole = |value: Value, size: u64| Operand {
        value,
        offset: 0,
        length: size,
    };
    let inputs = (0..arguments.len())
        .map(|n| span(whole(Value::Argument(n as u32), arguments[n]), 0))
        .collect::<Result<_, _>>()?;
    let outputs = (0..results.len())
        .map(|n| span(whole(Value::Result(n as u32), results[n]), 0))
        .collect::<Result<_, _>>()?;
    let aligned = |n: u64| n.div_ceil(ARENA_ALIGN) * ARENA_ALIGN;
    Ok(ProgramPlan {
        function: def.name.to_owned(),
        arena_bytes: planned.peak,
        inputs,
        outputs,
        steps: planned_steps,
        kernels: module
            .executables()
            .iter()
            .map(|e| e.kernel.to_owned())
            .collect(),
        separate_bytes: aligned(def.arena_size)
            + arguments
                .iter()
                .chain(&results)
                .map(|&n| aligned(n))
                .sum::<u64>(),
    })
}

/// The operands a step reads or writes.
fn operands(step: &Step<'_>) -> Vec<Operand> {
    match step {
        Step::Dispatch { bindings, .. } => bindings.iter().collect(),
        Step::Copy { source, target } => vec![*source, *target],
        Step::Fill { target, .. } => vec![*target],
        Step::Barrier => Vec::new(),
    }
}
