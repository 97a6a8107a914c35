//! The harness the three MicroFlow binaries share: run the model on TFLM's oracle cases,
//! compare, count instructions (Ember's `icount` measure, QEMU `-icount shift=0`), paint the
//! stack, and print one `EMBER-BENCH key=value …` line (Ember's format) over semihosting.
#![no_std]

use core::hint::black_box;

use cortex_m_rt::{exception, ExceptionFrame};

/// TFLM's oracle cases, embedded by `build.rs` from `$EMBER_ORACLE_DIR/<model>/`.
pub mod oracle {
    /// `sine.tflite` (MicroFlow's sine predictor).
    pub mod sine {
        include!(concat!(env!("OUT_DIR"), "/sine.rs"));
    }
    /// `micro_speech_quantized.tflite` (TinyConv speech commands).
    pub mod micro_speech_quantized {
        include!(concat!(env!("OUT_DIR"), "/micro_speech_quantized.rs"));
    }
    /// `person_detect.tflite` (MobileNet v1 0.25, 96×96 grey).
    pub mod person_detect {
        include!(concat!(env!("OUT_DIR"), "/person_detect.rs"));
    }
}

/// Timed inferences (after one warm-up); the median is reported.
const SAMPLES: usize = 5;

/// One model's oracle, as `build.rs` embeds it.
pub struct Oracle {
    /// The model's name in the result line.
    pub model: &'static str,
    /// The cases' names, in manifest order.
    pub names: &'static [&'static str],
    /// Every case's int8 input, case after case.
    pub inputs: &'static [u8],
    /// TFLM's int8 output for every case, case after case.
    pub outputs: &'static [u8],
}

/// Runs `infer` (int8 input bytes in, int8 output out) on every case and compares its
/// output with TFLM's; then times the last case's input as Ember's runner does
/// (`icount::median`: one warm-up, the median of 5, each within a few instructions); prints
/// the result line and exits 0.
pub fn run<const OUT: usize>(oracle: &Oracle, infer: fn(&[u8], &mut [i8; OUT])) -> ! {
    let painted = icount::stack::paint();
    let cases = oracle.names.len();
    if cases == 0
        || oracle.outputs.len() != cases * OUT
        || !oracle.inputs.len().is_multiple_of(cases)
    {
        fail("the embedded oracle does not match the model's shapes");
    }
    let in_len = oracle.inputs.len() / cases;

    // Outputs (elements) that differ from TFLM's, and by how much at most.
    let mut mismatches = 0u32;
    let mut max_abs_diff = 0i32;
    for case in 0..cases {
        let mut got = [0i8; OUT];
        infer(&oracle.inputs[case * in_len..][..in_len], &mut got);
        let want = &oracle.outputs[case * OUT..][..OUT];
        for (&g, &w) in got.iter().zip(want) {
            let diff = (i32::from(g) - i32::from(w as i8)).abs();
            mismatches += u32::from(diff != 0);
            max_abs_diff = max_abs_diff.max(diff);
        }
    }

    let input = &oracle.inputs[(cases - 1) * in_len..];
    let mut output = [0i8; OUT];
    let instructions = icount::median(SAMPLES, &mut || {
        infer(black_box(input), black_box(&mut output))
    });

    let Some(stack_peak) = icount::stack::peak(painted) else {
        fail("the stack reached the painted region's low end");
    };
    semihosting::println!(
        "EMBER-BENCH engine=microflow model={} instructions={} stack={} mismatches={} max_abs_diff={} cases={}",
        oracle.model,
        instructions,
        stack_peak,
        mismatches,
        max_abs_diff,
        cases
    );
    semihosting::process::exit(0)
}

/// Says why on stderr and exits 1.
pub fn fail(why: &str) -> ! {
    semihosting::eprintln!("EMBER-BENCH-ERROR microflow: {why}");
    semihosting::process::exit(1)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    semihosting::eprintln!("EMBER-BENCH-ERROR microflow: panic: {info}");
    semihosting::process::exit(1)
}

#[exception]
unsafe fn HardFault(_frame: &ExceptionFrame) -> ! {
    fail("HardFault")
}

#[exception]
unsafe fn DefaultHandler(_irq: i16) {
    fail("unexpected exception or interrupt")
}
