//! The static program (`ember-build`'s plan, run by `hal_local::program`, its dispatches
//! as they are and with the int8 weighted ones as direct calls) against the HAL
//! path (a `Session` over the local device, `ember_run::run_local`): every reference model,
//! lowered for the host and for a Cortex-M4 (`thumbv7em`, the layout the boards' firmware
//! embeds), on every case of TensorFlow Lite Micro's oracle — the two paths give the same
//! bytes. Also: the program's one arena (inputs and outputs inside it) is never above what
//! the HAL path needs for the arena and separate inputs and outputs, and stays within TFLM's
//! activation arena where TFLM reports one — in each case but for the scratch the
//! program lends the Cortex-M4 convolution for one step (on the HAL path, the kernel's
//! stack holds it).
//!
//! The oracle's cases are under `target/oracle/<model>/` (`cargo xtask oracle --all`, which
//! `cargo xtask test` runs first); without them this test says so loudly and checks
//! nothing.

mod common;

use ember_build::program::{plan_program, plan_program_with, Patches};
use ember_import::{lower_with, parse, LowerOptions};
use ember_run::run_local;
use hal_core::module::Module;

#[test]
fn the_static_program_gives_the_session_s_bytes_on_every_reference_model() {
    let Some(oracles) = common::reference_oracles() else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (dir, manifest) in oracles {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&manifest.model).expect("the model the oracle ran");
        let graph = parse(&bytes).expect("a reference model parses");
        for (lowering, options) in [
            ("host", LowerOptions::default()),
            (
                "thumbv7em",
                LowerOptions::for_target("thumbv7em-none-eabihf"),
            ),
        ] {
            let lowered = lower_with(&graph, "model", options).expect("a reference model lowers");
            let module = Module::parse(&lowered.built.bytes).expect("its module");
            let plan = plan_program(&module, None).expect("a static program");
            let patched =
                plan_program_with(&module, None, Patches::Smallest).expect("a patched program");
            for stage in &patched.patches {
                eprintln!("{name} ({lowering}): {stage}");
            }
            if patched.arena_bytes > plan.arena_bytes {
                failures.push(format!("{name} ({lowering}): the patched arena is larger"));
            }
            if patched
                .patches
                .iter()
                .any(|stage| stage.extra_multiply_adds != 0)
            {
                failures.push(format!("{name} ({lowering}): the patches recompute rows"));
            }
            let kernels = plan.local_kernels().expect("every kernel is hal-local's");
            let int8_weighted = plan.kernels.iter().any(|kernel| {
                ["conv2d_s8", "depthwise_conv2d_s8", "fully_connected_s8"]
                    .contains(&kernel.as_str())
            });
            if int8_weighted && (plan.direct_calls() == 0 || patched.direct_calls() == 0) {
                failures.push(format!(
                    "{name} ({lowering}): no dispatch became a direct call"
                ));
            }
            let head = manifest.arena.head.unwrap_or(u64::MAX);
            let scratch = plan.largest_scratch();
            eprintln!(
                "{name} ({lowering}): program arena {} B (inputs and outputs inside, {scratch} B \
                 of scratch at most), the HAL path's arena and separate inputs and outputs {} B, \
                 TFLM's activations {} B",
                plan.arena_bytes,
                plan.separate_bytes,
                manifest.arena.head.unwrap_or(0)
            );
            if plan.arena_bytes > plan.separate_bytes + scratch {
                failures.push(format!(
                    "{name} ({lowering}): the program's arena is larger"
                ));
            }
            if plan.arena_bytes > head.saturating_add(scratch) {
                failures.push(format!(
                    "{name} ({lowering}): program arena {} B is above TFLM's {head} B",
                    plan.arena_bytes
                ));
            }
            for case in &manifest.cases {
                let inputs = manifest.read_inputs(case).expect("oracle inputs");
                let bytes: Vec<Vec<u8>> = inputs.iter().map(|a| a.data().to_le_bytes()).collect();
                let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
                let session = run_local(&lowered, &refs, 1, 1).expect("the HAL path runs");
                for (how, plan, direct) in [
                    ("plain", &plan, false),
                    ("patched", &patched, false),
                    ("plain, direct calls", &plan, true),
                    ("patched, direct calls", &patched, true),
                ] {
                    let ran = if direct {
                        plan.run_direct(&kernels, module.pool(), &refs)
                    } else {
                        plan.run(&kernels, module.pool(), &refs)
                    };
                    match ran {
                        Ok(outputs) if outputs == session.outputs => {}
                        Ok(_) => failures.push(format!(
                            "{name} ({lowering}, {how}) case {}: the outputs differ",
                            case.name
                        )),
                        Err(e) => failures.push(format!(
                            "{name} ({lowering}, {how}) case {}: {e}",
                            case.name
                        )),
                    }
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} cases run both ways");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
