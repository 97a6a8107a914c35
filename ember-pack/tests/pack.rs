//! The packer: the committed example description packs, the planner reuses memory, and bad
//! descriptions are errors that name the problem.

use ember_pack::{pack, pack_file, Description, PackError};
use hal_core::module::Module;
use std::path::Path;

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/modules/chain.json")
}

#[test]
fn example_packs_and_reuses_the_arena() {
    let packed = pack_file(&example()).expect("packs");
    let module = Module::parse(&packed.bytes).expect("valid");
    assert_eq!(module.name(), "chain");
    assert_eq!(module.executables().len(), 3);
    // a, b, c are 32 bytes each (64 aligned); a dies when b is born... but a and b live
    // together at step 2, b and c at step 4: two slots suffice.
    assert_eq!(packed.arenas, vec![("run".to_string(), 128)]);
    assert_eq!(packed.unshared, vec![192]);
}

fn description(json: &str) -> Description {
    serde_json::from_str(json).expect("json")
}

fn error(json: &str) -> String {
    match pack(&description(json), Path::new(".")) {
        Ok(_) => panic!("packed a bad description"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_names_are_errors() {
    let e = error(
        r#"{"name": "m", "executables": [{"name": "add", "kernel": "add_f32"}],
            "functions": [{"name": "f", "arguments": [{"name": "x", "bytes": 4}],
              "steps": [{"dispatch": {"executable": "add", "bindings": ["x", "nope"]}}]}]}"#,
    );
    assert_eq!(e, "function `f`: no value named `nope`");
    let e = error(
        r#"{"name": "m", "functions": [{"name": "f", "arguments": [{"name": "x", "bytes": 4}],
              "steps": [{"dispatch": {"executable": "sub", "bindings": ["x"]}}]}]}"#,
    );
    assert_eq!(e, "function `f`: no executable named `sub`");
}

#[test]
fn duplicate_names_are_errors() {
    let e = error(
        r#"{"name": "m", "constants": [{"name": "x", "u32": [1]}],
            "functions": [{"name": "f", "arguments": [{"name": "x", "bytes": 4}], "steps": []}]}"#,
    );
    assert_eq!(e, "function `f`: `x` defined twice");
}

#[test]
fn invalid_modules_are_errors_from_validation() {
    // A range past the end of its value.
    let e = error(
        r#"{"name": "m", "functions": [{"name": "f", "arguments": [{"name": "x", "bytes": 8}],
              "results": [{"name": "y", "bytes": 8}],
              "steps": [{"copy": {"source": {"value": "x", "offset": 4, "length": 8},
                                  "target": "y"}}]}]}"#,
    );
    assert!(e.contains("function 0 step 0"), "{e}");
    assert!(e.contains("exceeds 8"), "{e}");
}

#[test]
fn missing_files_are_errors() {
    let e = pack_file(Path::new("/nonexistent/description.json")).unwrap_err();
    assert!(matches!(e, PackError::Io(..)), "{e}");
    let e = error(r#"{"name": "m", "constants": [{"name": "w", "file": "/nonexistent/w.bin"}]}"#);
    assert!(e.starts_with("/nonexistent/w.bin"), "{e}");
}
