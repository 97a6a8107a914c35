//! `Module::parse` on arbitrary bytes: it must never panic, and everything a parsed module
//! offers (every table, every lookup, the further checks) must work on what it accepted.

#![no_main]

use hal_core::module::{FunctionDef, Module, Operand, Step, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = Module::parse(data) else {
        return;
    };
    walk(&module, data);
});

/// Visits everything a valid module holds and checks the invariants `parse` promises.
fn walk(module: &Module<'_>, data: &[u8]) {
    let header = module.header();
    assert_eq!(module.name(), header.name);
    assert_eq!(module.pool().len() as u64, header.pool_len);

    let executables = module.executables();
    assert_eq!(executables.iter().count(), executables.len() as usize);
    for exe in executables.iter() {
        assert!(!exe.kernel.is_empty());
        if let Some(spirv) = exe.spirv {
            let bytes = module.pool_bytes(spirv);
            assert_eq!(bytes.len() as u64, spirv.length);
            assert_eq!(bytes.len() % 4, 0);
        }
    }

    let constants = module.constants();
    assert_eq!(constants.iter().count(), constants.len() as usize);
    for c in constants.iter() {
        assert_eq!(module.pool_bytes(c.data).len() as u64, c.data.length);
        let _ = c.name.len();
    }

    let functions = module.functions();
    assert_eq!(functions.iter().count(), functions.len() as usize);
    for (i, f) in functions.iter().enumerate() {
        // Names are unique, so the lookup finds this very function.
        let (index, found) = module.function(f.name).expect("a listed function is found");
        assert_eq!(index as usize, i);
        assert_eq!(found, f);
        assert_eq!(f.arguments.iter().count(), f.arguments.len() as usize);
        assert_eq!(f.results.iter().count(), f.results.len() as usize);
        assert!(f.arguments.iter().chain(f.results.iter()).all(|s| s > 0));
        for t in f.transients.iter() {
            assert!(t.offset + t.size <= f.arena_size);
        }
        let mut steps = 0;
        for step in f.steps.iter() {
            steps += 1;
            match step {
                Step::Dispatch {
                    executable,
                    workgroups,
                    constants,
                    bindings,
                } => {
                    assert!(executables.get(executable).is_some());
                    assert!(workgroups.iter().all(|&w| w > 0));
                    assert_eq!(constants.iter().count(), constants.len() as usize);
                    assert_eq!(bindings.iter().count(), bindings.len() as usize);
                    for b in bindings.iter() {
                        operand(module, &f, &b);
                    }
                }
                Step::Copy { source, target } => {
                    operand(module, &f, &source);
                    operand(module, &f, &target);
                    assert_eq!(source.length, target.length);
                }
                Step::Fill { target, .. } => operand(module, &f, &target),
                Step::Barrier => {}
            }
        }
        assert_eq!(steps, f.steps.len());
    }
    // Function names are never empty.
    assert!(module.function("").is_none());

    let sizes = module.sizes();
    assert_eq!(sizes.file, data.len() as u64);
    assert_eq!(sizes.pool, header.pool_len);
    module.check_kernels(|_| true).expect("every kernel linked");
    assert_eq!(
        module.check_kernels(|_| false).is_err(),
        !executables.is_empty()
    );
    module
        .check_arena(sizes.max_arena)
        .expect("the largest arena fits");
    let _ = module.check_arena(0);
    let _ = module.check_arena(sizes.max_arena.saturating_sub(1));
}

/// An operand of `f` refers to something that exists, and lies within it.
fn operand(module: &Module<'_>, f: &FunctionDef<'_>, op: &Operand) {
    let size = match op.value {
        Value::Argument(i) => f.arguments.get(i),
        Value::Result(i) => f.results.get(i),
        Value::Constant(i) => module.constants().get(i).map(|c| {
            assert_eq!(module.pool_bytes(c.data).len() as u64, c.data.length);
            c.data.length
        }),
        Value::Transient(i) => f.transients.get(i).map(|t| t.size),
    };
    let size = size.expect("an operand refers to a value that exists");
    assert!(op.length > 0 && op.offset + op.length <= size);
}
