//! Validation: every offset, length, count, alignment and reference in a decoded header,
//! without a heap. Costs O(header bytes) plus, per function, O(transients²) for the plan
//! (and, past [`WINDOW`] transients, a walk of the steps per pair of windows) and O(index)
//! per lookup of a constant's or a late transient's size.

use super::error::{ModuleError, Problem, Site};
use super::format::{
    ConstantDef, ExecutableDef, FunctionDef, Header, Operand, PoolRange, Step, TensorMeta,
    Transient, Value, POOL_ALIGN,
};
use super::seq::Seq;
use crate::command::{MAX_BINDINGS, MAX_BINDING_SLOTS, MAX_CONSTANTS, MAX_WORKGROUP_COUNT};
use serde::Deserialize;

/// Transients whose lifetimes validation holds at once (on the stack, 24 bytes each); a
/// function with more has its plan checked window against window, the steps walked again
/// for each window. A function's transients are bounded by their `u32` count alone.
const WINDOW: usize = 64;
/// Most steps one function may have.
pub const MAX_STEPS: u32 = 65_536;
/// Most arguments plus results of one function: the binding table holds them and the arena.
pub const MAX_VALUES: u32 = MAX_BINDING_SLOTS as u32 - 1;

/// Constants whose lengths validation keeps on the stack (8 bytes each); lookups of later
/// ones decode the table up to them.
const CACHED_CONSTANTS: usize = 64;

/// Checks a whole header against a pool of `pool_len` bytes.
pub(super) fn header(header: &Header<'_>, header_at: u64) -> Result<(), ModuleError> {
    let at = Site::Header { offset: header_at };
    let executables = seq(&header.executables, "executables", at)?;
    let constants = seq(&header.constants, "constants", at)?;
    seq(&header.functions, "functions", at)?;
    for (i, exe) in header.executables.iter().enumerate() {
        executable(&exe, header.pool_len, Site::Executable(i as u32))?;
    }
    let mut lengths = [0u64; CACHED_CONSTANTS];
    for (i, c) in header.constants.iter().enumerate() {
        constant(&c, header.pool_len, Site::Constant(i as u32))?;
        if let Some(l) = lengths.get_mut(i) {
            *l = c.data.length;
        }
    }
    let counts = Counts {
        executables,
        constants,
        lengths: &lengths,
    };
    for (i, f) in header.functions.iter().enumerate() {
        let i = i as u32;
        for (j, earlier) in header.functions.iter().take(i as usize).enumerate() {
            if earlier.name == f.name {
                let first = j as u32;
                return Err(ModuleError::new(
                    Site::Function(i),
                    Problem::DuplicateName { first },
                ));
            }
        }
        function(i, &f, &header.constants, counts)?;
    }
    Ok(())
}

/// Checks that every element of `seq` decodes and the bytes hold exactly `len()` elements.
fn seq<'a, T: Deserialize<'a> + 'a>(
    seq: &Seq<'a, T>,
    what: &'static str,
    site: Site,
) -> Result<u32, ModuleError> {
    let bytes = seq.encoded().len() as u64;
    if u64::from(seq.len()) > bytes {
        // Every element takes at least one byte.
        let problem = Problem::Count {
            what,
            count: seq.len().into(),
            max: bytes,
        };
        return Err(ModuleError::new(site, problem));
    }
    let mut items = seq.try_iter();
    for item in items.by_ref() {
        if item.is_err() {
            return Err(ModuleError::new(site, Problem::Malformed));
        }
    }
    if !items.rest().is_empty() {
        let extra = items.rest().len() as u64;
        return Err(ModuleError::new(site, Problem::TrailingBytes { extra }));
    }
    Ok(seq.len())
}

/// `count` of `what` is at most `max`.
fn limit(what: &'static str, count: u64, max: u64, site: Site) -> Result<(), ModuleError> {
    if count > max {
        return Err(ModuleError::new(site, Problem::Count { what, count, max }));
    }
    Ok(())
}

fn range(
    what: &'static str,
    offset: u64,
    length: u64,
    limit: u64,
    site: Site,
) -> Result<(), ModuleError> {
    match offset.checked_add(length) {
        Some(end) if end <= limit => Ok(()),
        _ => Err(ModuleError::new(
            site,
            Problem::OutOfBounds {
                what,
                offset,
                length,
                limit,
            },
        )),
    }
}

fn aligned(what: &'static str, value: u64, align: u64, site: Site) -> Result<(), ModuleError> {
    if value % align == 0 {
        Ok(())
    } else {
        Err(ModuleError::new(
            site,
            Problem::Misaligned { what, value, align },
        ))
    }
}

fn non_empty(what: &'static str, length: u64, site: Site) -> Result<(), ModuleError> {
    if length == 0 {
        Err(ModuleError::new(site, Problem::Empty { what }))
    } else {
        Ok(())
    }
}

fn pool_range(what: &'static str, r: PoolRange, pool: u64, site: Site) -> Result<(), ModuleError> {
    non_empty(what, r.length, site)?;
    range(what, r.offset, r.length, pool, site)
}

fn executable(exe: &ExecutableDef<'_>, pool: u64, site: Site) -> Result<(), ModuleError> {
    non_empty("kernel name", exe.kernel.len() as u64, site)?;
    if let Some(spirv) = exe.spirv {
        pool_range("SPIR-V", spirv, pool, site)?;
        aligned("SPIR-V offset", spirv.offset, 4, site)?;
        aligned("SPIR-V length", spirv.length, 4, site)?;
        non_empty("SPIR-V entry point", exe.entry.len() as u64, site)?;
    }
    Ok(())
}

fn constant(c: &ConstantDef<'_>, pool: u64, site: Site) -> Result<(), ModuleError> {
    pool_range("constant", c.data, pool, site)?;
    aligned("constant offset", c.data.offset, POOL_ALIGN, site)
}

#[derive(Clone, Copy)]
struct Counts<'c> {
    executables: u32,
    constants: u32,
    /// Lengths of the first [`CACHED_CONSTANTS`] constants.
    lengths: &'c [u64; CACHED_CONSTANTS],
}

/// A transient's arena range and the steps that use it (first > last: never used).
#[derive(Clone, Copy)]
struct Live {
    offset: u64,
    size: u64,
    first: u32,
    last: u32,
}

const UNUSED: Live = Live {
    offset: 0,
    size: 0,
    first: u32::MAX,
    last: 0,
};

/// A function's descriptions of its `values` (arguments or results): none, or one per
/// value whose shape fills it.
fn describe(
    what: &'static str,
    metas: &Seq<'_, TensorMeta<'_>>,
    values: &[u64],
    site: Site,
) -> Result<(), ModuleError> {
    let count = seq(metas, what, site)?;
    if count == 0 {
        return Ok(());
    }
    if count as usize != values.len() {
        let problem = Problem::DescriptionCount {
            what,
            count,
            values: values.len() as u32,
        };
        return Err(ModuleError::new(site, problem));
    }
    for (i, (meta, &size)) in metas.iter().zip(values).enumerate() {
        seq(&meta.shape, "tensor shape", site)?;
        let described = meta
            .shape
            .iter()
            .try_fold(meta.element.size(), |n, d| {
                (d > 0).then(|| n.checked_mul(u64::from(d))).flatten()
            })
            .unwrap_or(0);
        if described != size || !meta.scale.is_finite() || meta.scale < 0.0 {
            let problem = Problem::DescriptionSize {
                what,
                index: i as u32,
                described,
                size,
            };
            return Err(ModuleError::new(site, problem));
        }
    }
    Ok(())
}

fn function(
    index: u32,
    f: &FunctionDef<'_>,
    constants: &Seq<'_, ConstantDef<'_>>,
    counts: Counts<'_>,
) -> Result<(), ModuleError> {
    let site = Site::Function(index);
    non_empty("function name", f.name.len() as u64, site)?;
    let arguments = seq(&f.arguments, "arguments", site)?;
    let results = seq(&f.results, "results", site)?;
    let transients = seq(&f.transients, "transients", site)?;
    let steps = seq(&f.steps, "steps", site)?;
    let values = u64::from(arguments) + u64::from(results);
    limit("arguments and results", values, MAX_VALUES.into(), site)?;
    limit("steps", steps.into(), MAX_STEPS.into(), site)?;
    // Sizes of the arguments, then the results (at most MAX_VALUES in all).
    let mut sizes = [0u64; MAX_VALUES as usize];
    for (slot, size) in sizes
        .iter_mut()
        .zip(f.arguments.iter().chain(f.results.iter()))
    {
        non_empty("argument or result", size, site)?;
        *slot = size;
    }

    describe("arguments", &f.inputs, &sizes[..arguments as usize], site)?;
    describe(
        "results",
        &f.outputs,
        &sizes[arguments as usize..(arguments + results) as usize],
        site,
    )?;

    let mut transient_sizes = [0u64; WINDOW];
    for (t, Transient { offset, size }) in f.transients.iter().enumerate() {
        let at = Site::Transient {
            function: index,
            transient: t as u32,
        };
        non_empty("transient", size, at)?;
        aligned("transient offset", offset, 4, at)?;
        range("transient", offset, size, f.arena_size, at)?;
        if let Some(cached) = transient_sizes.get_mut(t) {
            *cached = size;
        }
    }

    let scope = Scope {
        constants,
        counts,
        arguments,
        results,
        sizes: &sizes,
        transients: Transients {
            count: transients,
            sizes: &transient_sizes,
            defs: &f.transients,
        },
    };
    // Every step checked once, on the walk that finds the first window's lifetimes.
    let first = lifetimes(index, f, &scope, 0, true)?;
    plan_at(index, 0, &first, 0, &first, true)?;
    if transients as usize > WINDOW {
        plan_windows(index, f, &scope, &first)?;
    }
    Ok(())
}

/// The lifetimes of transients `window * WINDOW ..` (at most [`WINDOW`] of them): their
/// arena ranges, and the first and last step that uses each, from a walk of every step that
/// checks each step where `check` (the first walk) and only reads its transients otherwise
/// (a later window's walk: the steps are checked, and checking again would look up every
/// transient operand's size again, `O(index)` each in the sequence).
fn lifetimes(
    function: u32,
    f: &FunctionDef<'_>,
    scope: &Scope<'_, '_>,
    window: usize,
    check: bool,
) -> Result<heapless::Vec<Live, WINDOW>, ModuleError> {
    let start = window * WINDOW;
    let mut live = heapless::Vec::new();
    for Transient { offset, size } in f.transients.iter().skip(start).take(WINDOW) {
        let _ = live.push(Live {
            offset,
            size,
            ..UNUSED
        });
    }
    let mut uses = Uses::new();
    for (s, step) in f.steps.iter().enumerate() {
        let s = s as u32;
        if check {
            scope.step(&step, Site::Step { function, step: s }, &mut uses)?;
        } else {
            transient_uses(&step, &mut uses);
        }
        for &t in &uses[..] {
            let Some(l) = (t as usize)
                .checked_sub(start)
                .and_then(|k| live.get_mut(k))
            else {
                continue;
            };
            l.first = l.first.min(s);
            l.last = l.last.max(s);
        }
        uses.clear();
    }
    Ok(live)
}

/// The plan of a function of more than [`WINDOW`] transients past the first window's own
/// pairs: each later window against itself and every window before it, each window's
/// lifetimes found by walking the steps again. Out of line: a function of at most
/// [`WINDOW`] transients keeps one window on its stack.
#[inline(never)]
fn plan_windows(
    function: u32,
    f: &FunctionDef<'_>,
    scope: &Scope<'_, '_>,
    first: &[Live],
) -> Result<(), ModuleError> {
    let windows = (scope.transients.count as usize).div_ceil(WINDOW);
    for later in 1..windows {
        let late = lifetimes(function, f, scope, later, false)?;
        let base = later * WINDOW;
        plan_at(function, base, &late, base, &late, true)?;
        for earlier in 0..later {
            if earlier == 0 {
                plan_at(function, 0, first, base, &late, false)?;
            } else {
                let early = lifetimes(function, f, scope, earlier, false)?;
                plan_at(function, earlier * WINDOW, &early, base, &late, false)?;
            }
        }
    }
    Ok(())
}

/// No two transients share arena bytes while both are live: each of `later` (transients
/// `later_base ..`) against each of `earlier` (transients `earlier_base ..`), or, where
/// `same` (the two one window), against each before it.
fn plan_at(
    function: u32,
    earlier_base: usize,
    earlier: &[Live],
    later_base: usize,
    later: &[Live],
    same: bool,
) -> Result<(), ModuleError> {
    for (b, lb) in later.iter().enumerate() {
        let before = if same { &earlier[..b] } else { earlier };
        for (a, la) in before.iter().enumerate() {
            let used = la.first <= la.last && lb.first <= lb.last;
            let together = used && la.first <= lb.last && lb.first <= la.last;
            let share = la.offset < lb.offset + lb.size && lb.offset < la.offset + la.size;
            if together && share {
                let site = Site::Transient {
                    function,
                    transient: (later_base + b) as u32,
                };
                let other = (earlier_base + a) as u32;
                return Err(ModuleError::new(site, Problem::PlanOverlap { other }));
            }
        }
    }
    Ok(())
}

/// A function's transients as operands see them: their count, and the sizes of the first
/// [`WINDOW`] (later ones decoded from the table).
struct Transients<'f, 'a> {
    count: u32,
    sizes: &'f [u64; WINDOW],
    defs: &'f Seq<'a, Transient>,
}

impl Transients<'_, '_> {
    fn size(&self, index: u32) -> u64 {
        match self.sizes.get(index as usize) {
            Some(&size) => size,
            // Validated sequences decode, so the transient is always found.
            None => self.defs.get(index).map_or(0, |t| t.size),
        }
    }
}

/// The transients one step refers to (a dispatch has at most `MAX_BINDINGS` operands).
type Uses = heapless::Vec<u32, { MAX_BINDINGS + 1 }>;

/// The transients a checked step refers to, without checking it again.
fn transient_uses(step: &Step<'_>, uses: &mut Uses) {
    let mut note = |operand: &Operand| {
        if let Value::Transient(index) = operand.value {
            let _ = uses.push(index);
        }
    };
    match step {
        Step::Dispatch { bindings, .. } => bindings.iter().for_each(|operand| note(&operand)),
        Step::Copy { source, target } => {
            note(source);
            note(target);
        }
        Step::Fill { target, .. } => note(target),
        Step::Barrier => {}
    }
}

struct Scope<'f, 'a> {
    constants: &'f Seq<'a, ConstantDef<'a>>,
    counts: Counts<'f>,
    arguments: u32,
    results: u32,
    /// Argument sizes, then result sizes.
    sizes: &'f [u64; MAX_VALUES as usize],
    /// The transients.
    transients: Transients<'f, 'a>,
}

impl Scope<'_, '_> {
    fn step(&self, step: &Step<'_>, site: Site, uses: &mut Uses) -> Result<(), ModuleError> {
        match *step {
            Step::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
            } => {
                self.index("executable", executable, self.counts.executables, site)?;
                for count in workgroups {
                    if count == 0 || count > MAX_WORKGROUP_COUNT {
                        let problem = Problem::OutOfRange {
                            what: "workgroup count",
                            value: count.into(),
                            max: MAX_WORKGROUP_COUNT.into(),
                        };
                        return Err(ModuleError::new(site, problem));
                    }
                }
                let n = seq(&constants, "push constants", site)?;
                limit("push constants", n.into(), MAX_CONSTANTS as u64, site)?;
                let n = seq(&bindings, "bindings", site)?;
                limit("bindings", n.into(), MAX_BINDINGS as u64, site)?;
                for operand in bindings.iter() {
                    self.operand(&operand, site, uses)?;
                }
                Ok(())
            }
            Step::Copy { source, target } => {
                self.operand(&source, site, uses)?;
                self.operand(&target, site, uses)?;
                self.writable(&target, site)?;
                let overlap = source.value == target.value
                    && source.offset < target.offset + target.length
                    && target.offset < source.offset + source.length;
                if source.length != target.length || overlap {
                    let problem = Problem::BadCopy {
                        source_length: source.length,
                        target_length: target.length,
                    };
                    return Err(ModuleError::new(site, problem));
                }
                Ok(())
            }
            Step::Fill { target, .. } => {
                self.operand(&target, site, uses)?;
                self.writable(&target, site)?;
                aligned("fill length", target.length, 4, site)
            }
            Step::Barrier => Ok(()),
        }
    }

    fn index(
        &self,
        what: &'static str,
        index: u32,
        count: u32,
        site: Site,
    ) -> Result<(), ModuleError> {
        if index < count {
            Ok(())
        } else {
            let problem = Problem::UnknownReference { what, index, count };
            Err(ModuleError::new(site, problem))
        }
    }

    fn writable(&self, operand: &Operand, site: Site) -> Result<(), ModuleError> {
        match operand.value {
            Value::Constant(index) => {
                Err(ModuleError::new(site, Problem::WritesConstant { index }))
            }
            _ => Ok(()),
        }
    }

    /// Checks the reference and range of an operand and reports transient uses.
    fn operand(&self, operand: &Operand, site: Site, uses: &mut Uses) -> Result<(), ModuleError> {
        let (what, size) = match operand.value {
            Value::Argument(i) => {
                self.index("argument", i, self.arguments, site)?;
                ("argument", self.sizes[i as usize])
            }
            Value::Result(i) => {
                self.index("result", i, self.results, site)?;
                ("result", self.sizes[(self.arguments + i) as usize])
            }
            Value::Constant(i) => {
                self.index("constant", i, self.counts.constants, site)?;
                let length = match self.counts.lengths.get(i as usize) {
                    Some(&length) => length,
                    // Validated sequences decode, so the constant is always found.
                    None => self.constants.get(i).map_or(0, |c| c.data.length),
                };
                ("constant", length)
            }
            Value::Transient(i) => {
                self.index("transient", i, self.transients.count, site)?;
                let _ = uses.push(i);
                ("transient", self.transients.size(i))
            }
        };
        non_empty("operand", operand.length, site)?;
        aligned("operand offset", operand.offset, 4, site)?;
        range(what, operand.offset, operand.length, size, site)
    }
}
