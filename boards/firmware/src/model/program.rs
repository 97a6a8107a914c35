//! The model as a static program: the steps `ember-build` recorded at build time (its int8
//! convolutions and fully connected layers as direct calls), run by `hal_local::program`
//! (or, where every step is a direct call, `hal_local::direct`) over one static arena that
//! holds the inputs, the outputs and every intermediate value, the constant pool read in
//! place from flash. No device, allocator, object table, command buffer or queue is
//! linked.

use super::{cases, config, log_class, mismatches, module, step_failed, ModelReport, NOOP_KERNELS};
use hal_local::direct;
use hal_local::kernel::Kernel;
use hal_local::program::{run, run_without_calls, Span};
use static_cell::ConstStaticCell;

/// The arena, 64-byte aligned (the plan aligns every value to 16 bytes within it).
#[repr(C, align(64))]
struct Arena([u8; module::PROGRAM_ARENA_BYTES]);

/// One invocation over `arena` with `kernels`, each direct call's kernel called if
/// `call` (without, and with kernels that do nothing, the runtime's own work). Where
/// every step is a direct call, the calls alone run: a constant choice, so the firmware
/// links only the loop it runs.
fn invoke(arena: &mut [u8], call: bool, kernels: &[Kernel]) -> Result<(), &'static str> {
    let pool = &module::POOL.0;
    let calls = &module::PROGRAM_CALLS;
    let ran = match (calls.len() == module::PROGRAM.len(), call) {
        (true, true) => direct::run(calls, arena, pool),
        (true, false) => direct::run_without_calls(calls, arena, pool),
        (false, true) => run(&module::PROGRAM, kernels, arena, pool),
        (false, false) => run_without_calls(&module::PROGRAM, kernels, arena, pool),
    };
    ran.map_err(step_failed("run the program"))
}

/// Writes a case's inputs into their spans of the arena.
fn write_inputs(arena: &mut [u8], case_inputs: &[u8]) -> Result<(), &'static str> {
    let mut at = 0;
    for (span, &len) in module::PROGRAM_INPUTS.iter().zip(&config::INPUT_BYTES) {
        let input = case_inputs.get(at..at + len).ok_or("read a case's input")?;
        bytes(arena, span)?.copy_from_slice(input);
        at += len;
    }
    Ok(())
}

/// Instructions of one invocation on `case_inputs` (the median of 5 after a warm-up). The
/// program reuses the inputs' bytes once they are read, so each round writes them again;
/// the instructions of writing them alone, timed the same way, are taken off.
fn time(
    arena: &mut [u8],
    call: bool,
    kernels: &[Kernel],
    case_inputs: &[u8],
) -> Result<u64, &'static str> {
    let mut failed = false;
    let with_inputs = icount::median(5, &mut || {
        failed |= write_inputs(arena, case_inputs).is_err() || invoke(arena, call, kernels).is_err()
    });
    let inputs_alone = icount::median(5, &mut || {
        failed |= write_inputs(arena, case_inputs).is_err()
    });
    if failed {
        return Err("invoke the model while timing it");
    }
    Ok(with_inputs.saturating_sub(inputs_alone))
}

/// The bytes of `span` in `arena`.
fn bytes<'a>(arena: &'a mut [u8], span: &Span) -> Result<&'a mut [u8], &'static str> {
    arena
        .get_mut(span.range())
        .ok_or("find a tensor in the arena")
}

/// Runs every case and times one, then the runtime alone. Returns the report, the bytes of
/// the model's data (the arena) and the arena.
pub(super) fn measure() -> Result<(ModelReport, usize, usize), &'static str> {
    static ARENA: ConstStaticCell<Arena> =
        ConstStaticCell::new(Arena([0; module::PROGRAM_ARENA_BYTES]));
    let arena = &mut ARENA.try_take().ok_or("the runner ran twice")?.0;
    let mut report = ModelReport::default();
    for (case_inputs, case_outputs, name) in cases() {
        write_inputs(arena, case_inputs)?;
        invoke(arena, true, &module::PROGRAM_KERNELS)?;
        let mut at = 0;
        for ((span, &len), &float) in module::PROGRAM_OUTPUTS
            .iter()
            .zip(&config::OUTPUT_BYTES)
            .zip(&config::FLOAT_OUTPUTS)
        {
            let want = case_outputs
                .get(at..at + len)
                .ok_or("read a case's output")?;
            report.mismatches += mismatches(bytes(arena, span)?, want, float);
            at += len;
        }
        if let Some(first) = module::PROGRAM_OUTPUTS.first() {
            log_class(name, bytes(arena, first)?);
        }
        report.cases += 1;
    }
    // Timed on the last case's inputs.
    let (last_inputs, _, _) = cases().last().ok_or("find a case")?;
    report.instructions = time(arena, true, &module::PROGRAM_KERNELS, last_inputs)?;
    // Direct calls cut their bindings and call nothing; dispatches call kernels that do
    // nothing.
    report.overhead = time(arena, false, &NOOP_KERNELS, last_inputs)?;
    Ok((
        report,
        module::PROGRAM_ARENA_BYTES,
        module::PROGRAM_ARENA_BYTES,
    ))
}
