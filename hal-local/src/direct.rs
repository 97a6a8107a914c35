//! Direct calls: a static program's dispatches whose parameters the build decoded and
//! checked into typed statics ([`Step::Call`](crate::program::Step::Call)). Each calls its
//! kernel straight: no parameter words decoded, no binding table built, no kernel table
//! entry, so the firmware links only the kernels it calls.
//!
//! Invariants a call keeps, as every step of a program does: its spans lie inside their
//! places, arena spans start 4-byte aligned and its written span and scratch share no byte
//! with each other or with what it reads. A call that breaks one is refused as malformed,
//! never run.
//!
//! ```
//! use hal_local::direct::{params::*, WeightedS8};
//! use hal_local::program::{run, Span, Step};
//!
//! // out[0] = 2 * 3 + 1, as one int8 fully connected layer with a multiplier of 1.0.
//! static LAYER: WeightedS8<FullyConnectedS8> = WeightedS8 {
//!     params: &FullyConnectedS8 {
//!         shape: FullyConnectedShape { batches: 1, accum_depth: 1, output_depth: 1, has_bias: true },
//!         input_offset: 0,
//!         filter_offset: 0,
//!         output_offset: 0,
//!         act_min: -128,
//!         act_max: 127,
//!         per_channel: false,
//!     },
//!     // input, weights, bias, multiplier, shift
//!     reads: [Span::arena(0, 1), Span::pool(0, 1), Span::pool(4, 4), Span::pool(8, 4), Span::pool(12, 4)],
//!     output: Span::arena(4, 1),
//!     scratch: Span::NONE,
//! };
//! #[repr(align(4))]
//! struct Words<const N: usize>([u8; N]);
//! let mut pool = Words([0u8; 16]);
//! pool.0[0] = 3;
//! pool.0[4..8].copy_from_slice(&1i32.to_le_bytes());
//! pool.0[8..12].copy_from_slice(&(1i32 << 30).to_le_bytes());
//! pool.0[12..16].copy_from_slice(&1i32.to_le_bytes());
//! let mut arena = Words([2u8, 0, 0, 0, 0, 0, 0, 0]);
//! run(&[Step::Call(&LAYER)], &[], &mut arena.0, &pool.0)?;
//! assert_eq!(arena.0[4], 7);
//! # Ok::<(), hal_local::program::ProgramError>(())
//! ```

use core::fmt::Debug;

use ember_kernels::conv2d::Conv2dS8;
use ember_kernels::depthwise_conv2d::DepthwiseConv2dS8;
use ember_kernels::fully_connected::FullyConnectedS8;
use ember_kernels::{written_binding, KernelError};

use crate::kernel::{elements, elements_mut, Entry, Kernel, Workgroup};
pub use crate::kernels::tflite::WeightedS8Params;
use crate::program::{Cut, Failure, ProgramError, Span};

/// The parameter types a direct call holds, by the names their literals use.
pub mod params {
    pub use ember_kernels::conv2d::{Conv2dS8, Conv2dShape};
    pub use ember_kernels::depthwise_conv2d::{DepthwiseConv2dS8, DepthwiseConv2dShape};
    pub use ember_kernels::fully_connected::{FullyConnectedS8, FullyConnectedShape};
    pub use ember_kernels::padding::Window;
}

/// One kernel call of a static program, its parameters typed.
pub trait Call: Sync {
    /// Cuts the call's bindings from `arena` (4-byte aligned) and `pool`, checks them, and
    /// calls the kernel if `run`.
    fn call(&self, arena: &mut [u8], pool: &[u8], run: bool) -> Result<(), Failure>;
}

// Not a supertrait, so a call's vtable carries no formatting code into firmware.
impl Debug for dyn Call + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Call")
    }
}

/// Runs a program every step of which is a direct call, `calls` in order, over `arena`
/// and `pool`: the loop alone, so no dispatch, copy or fill code is linked. The caller
/// has written the inputs into their arena spans; the outputs are in theirs when it
/// returns `Ok`.
pub fn run(calls: &[&dyn Call], arena: &mut [u8], pool: &[u8]) -> Result<(), ProgramError> {
    run_calls(calls, arena, pool, true)
}

/// Cuts and checks every call's bindings as [`run`] does, calling no kernel: the
/// runtime's own work.
pub fn run_without_calls(
    calls: &[&dyn Call],
    arena: &mut [u8],
    pool: &[u8],
) -> Result<(), ProgramError> {
    run_calls(calls, arena, pool, false)
}

fn run_calls(
    calls: &[&dyn Call],
    arena: &mut [u8],
    pool: &[u8],
    run: bool,
) -> Result<(), ProgramError> {
    if arena.as_ptr().align_offset(4) != 0 {
        return Err(ProgramError::MisalignedArena);
    }
    for (step, call) in (0u32..).zip(calls) {
        call.call(arena, pool, run)
            .map_err(|failure| failure.at(step))?;
    }
    Ok(())
}

/// The entry of a static program's kernel table for an executable every dispatch of which
/// is a direct call: it refuses any dispatch, and links no kernel.
pub const CALLED_DIRECTLY: Kernel = Kernel {
    name: "called_directly",
    entry: Entry::Shared(refuse),
};

fn refuse(_wg: &Workgroup<'_>) -> Result<(), KernelError> {
    Err(KernelError::Shape(
        "this executable is called directly (the program dispatches it by no words)",
    ))
}

/// An int8 weighted op (a convolution, a depthwise convolution or a fully connected layer)
/// called straight: the core's tuned kernel alone where the build chose it
/// ([`WeightedS8Params::run_tuned`]).
#[derive(Debug, Clone, Copy)]
pub struct WeightedS8<'p, P> {
    /// The parameters, decoded and checked at build time (a static of their own, which
    /// calls with the same parameters share).
    pub params: &'p P,
    /// Input, filter, bias, multipliers and shifts, in that order.
    pub reads: [Span; 5],
    /// The output.
    pub output: Span,
    /// Scratch lent to the kernel (an arena span; empty where it asks for none).
    pub scratch: Span,
}

impl<P: WeightedS8Params> Call for WeightedS8<'_, P> {
    fn call(&self, arena: &mut [u8], pool: &[u8], run: bool) -> Result<(), Failure> {
        const OUTPUT: u32 = 5;
        let Cut { write, lent, reads } =
            Cut::new(arena, pool, self.output, self.scratch).ok_or(Failure::Malformed)?;
        let [input, filter, bias, multipliers, shifts] = self.reads;
        let read = |span: &Span| reads.get(span).ok_or(Failure::Malformed);
        let kernel = Failure::Kernel;
        let input = elements::<i8>(read(&input)?, 0).map_err(kernel)?;
        let filter = elements::<i8>(read(&filter)?, 1).map_err(kernel)?;
        let bias = elements::<i32>(read(&bias)?, 2).map_err(kernel)?;
        let multipliers = elements::<i32>(read(&multipliers)?, 3).map_err(kernel)?;
        let shifts = elements::<i32>(read(&shifts)?, 4).map_err(kernel)?;
        let output = elements_mut::<i8>(write, OUTPUT).map_err(kernel)?;
        if !run {
            return Ok(());
        }
        self.params
            .run_tuned(input, filter, bias, multipliers, shifts, output, lent)
            .map_err(kernel)
    }
}

// The three take the same bindings, the output fifth.
const _: () = assert!(
    written_binding::<FullyConnectedS8>() == 5
        && written_binding::<Conv2dS8>() == 5
        && written_binding::<DepthwiseConv2dS8>() == 5
);

#[cfg(test)]
mod tests {
    use super::params::*;
    use super::*;
    use crate::kernels::tflite::FULLY_CONNECTED_S8;
    use crate::program::{run, run_without_calls, Step};
    use ember_kernels::{KernelParams, Words};

    #[repr(align(4))]
    struct Aligned<const N: usize>([u8; N]);

    /// A 3-input, 2-output int8 layer: weights and bias, multipliers and shift in the pool.
    fn layer() -> (FullyConnectedS8, Aligned<32>) {
        let params = FullyConnectedS8 {
            shape: FullyConnectedShape {
                batches: 1,
                accum_depth: 3,
                output_depth: 2,
                has_bias: true,
            },
            input_offset: 5,
            filter_offset: 0,
            output_offset: -3,
            act_min: -128,
            act_max: 127,
            per_channel: false,
        };
        let mut pool = Aligned([0u8; 32]);
        pool.0[..6].copy_from_slice(&[1, 2, 3, (-4i8) as u8, 5, (-6i8) as u8]);
        pool.0[8..12].copy_from_slice(&100i32.to_le_bytes());
        pool.0[12..16].copy_from_slice(&(-50i32).to_le_bytes());
        pool.0[16..20].copy_from_slice(&(1i32 << 30).to_le_bytes());
        pool.0[20..24].copy_from_slice(&(-1i32).to_le_bytes());
        (params, pool)
    }

    const READS: [Span; 5] = [
        Span::arena(0, 3),
        Span::pool(0, 6),
        Span::pool(8, 8),
        Span::pool(16, 4),
        Span::pool(20, 4),
    ];

    #[test]
    fn a_direct_call_equals_the_dispatch_of_its_words() {
        let (params, pool) = layer();
        let call = WeightedS8 {
            params: &params,
            reads: READS,
            output: Span::arena(8, 2),
            scratch: Span::NONE,
        };
        let mut words = heapless::Vec::<u32, 16>::new();
        params.encode(&mut words);
        assert_eq!(
            FullyConnectedS8::decode(&mut Words::new(&words)),
            Ok(params)
        );
        let dispatch = Step::Dispatch {
            executable: 0,
            workgroups: [1, 1, 1],
            constants: &words,
            bindings: &[
                READS[0],
                READS[1],
                READS[2],
                READS[3],
                READS[4],
                Span::arena(12, 2),
            ],
            scratch: Span::NONE,
        };
        let mut arena = Aligned([0u8; 16]);
        arena.0[..3].copy_from_slice(&[7, (-9i8) as u8, 30]);
        run(
            &[Step::Call(&call), dispatch],
            &[FULLY_CONNECTED_S8],
            &mut arena.0,
            &pool.0,
        )
        .unwrap();
        assert_eq!(arena.0[8..10], arena.0[12..14]);
        assert_ne!(arena.0[8..10], [0, 0]);

        // Without calls, the bindings are cut and nothing is written.
        arena.0[8..10].fill(0);
        run_without_calls(&[Step::Call(&call)], &[], &mut arena.0, &pool.0).unwrap();
        assert_eq!(arena.0[8..10], [0, 0]);
    }

    #[test]
    fn a_broken_call_is_refused_not_run() {
        let (params, pool) = layer();
        let broken = [
            // Output over the input.
            (READS, Span::arena(2, 2), Span::NONE),
            // Scratch over the output.
            (READS, Span::arena(8, 2), Span::arena(8, 4)),
            // Output outside the arena.
            (READS, Span::arena(16, 2), Span::NONE),
        ];
        for (reads, output, scratch) in broken {
            let call = WeightedS8 {
                params: &params,
                reads,
                output,
                scratch,
            };
            let mut arena = Aligned([0u8; 16]);
            assert_eq!(
                run(&[Step::Call(&call)], &[], &mut arena.0, &pool.0),
                Err(ProgramError::Malformed { step: 0 }),
                "{call:?}"
            );
        }
        // A short binding is the kernel's refusal, naming the step.
        let mut short = READS;
        short[1] = Span::pool(0, 5);
        let call = WeightedS8 {
            params: &params,
            reads: short,
            output: Span::arena(8, 2),
            scratch: Span::NONE,
        };
        let mut arena = Aligned([0u8; 16]);
        assert!(matches!(
            run(&[Step::Call(&call)], &[], &mut arena.0, &pool.0),
            Err(ProgramError::Kernel { step: 0, .. })
        ));
    }
}
