//! The module format against malformed input: a committed corpus of broken modules
//! (`tests/corpus/module/*.bin`, each refused for the reason `expected.txt` names), the fuzz
//! seeds (`fuzz/corpus/module`, each accepted), and an in-process mutation sweep that must
//! never panic.
//!
//! Both corpora come from code: `cargo test -p ember-tests --test module_corpus --
//! --ignored regenerate_corpus` rewrites them, and `corpus_matches_its_generator` fails when
//! the committed files drift from what the generator makes.

use hal_core::module::{
    format::{pool_offset, MAGIC, PREAMBLE_BYTES, VERSION},
    write, ConstantDef, Element, ExecutableDef, FunctionDef, Header, Module, ModuleBuilder,
    Operand, PoolRange, Seq, Step, TensorMeta, Transient, Value,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Hand encoding: an owned model of a module that can say things the builder never would.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Exe {
    kernel: String,
    spirv: Option<PoolRange>,
    entry: String,
}

#[derive(Debug, Clone)]
enum S {
    Dispatch {
        executable: u32,
        workgroups: [u32; 3],
        constants: Vec<u32>,
        bindings: Vec<Operand>,
    },
    Copy(Operand, Operand),
    Fill(Operand, u32),
    Barrier,
    /// Bytes in place of an encoded step.
    Raw(Vec<u8>),
}

#[derive(Debug, Clone)]
struct Func {
    name: String,
    arguments: Vec<u64>,
    results: Vec<u64>,
    /// Shapes of `f32` tensors describing the arguments (none: undescribed).
    described: Vec<Vec<u32>>,
    transients: Vec<Transient>,
    arena_size: u64,
    steps: Vec<S>,
}

/// A header's three tables as `(count, encoded elements)`, before they become `Seq`s.
#[derive(Debug, Clone)]
struct Tables {
    executables: (u32, Vec<u8>),
    constants: (u32, Vec<u8>),
    functions: (u32, Vec<u8>),
}

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    pool: Vec<u8>,
    /// `header.pool_len` when it should not be `pool.len()`.
    pool_len: Option<u64>,
    executables: Vec<Exe>,
    constants: Vec<(String, PoolRange)>,
    functions: Vec<Func>,
}

fn enc<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_allocvec(value).expect("postcard encodes into a Vec")
}

fn enc_all<T: Serialize>(items: &[T]) -> (u32, Vec<u8>) {
    (items.len() as u32, items.iter().flat_map(enc).collect())
}

fn seq<T>((count, bytes): &(u32, Vec<u8>)) -> Seq<'_, T> {
    Seq::from_encoded(*count, bytes)
}

fn step_bytes(step: &S) -> Vec<u8> {
    match step {
        S::Dispatch {
            executable,
            workgroups,
            constants,
            bindings,
        } => {
            let (c, b) = (enc_all(constants), enc_all(bindings));
            enc(&Step::Dispatch {
                executable: *executable,
                workgroups: *workgroups,
                constants: seq(&c),
                bindings: seq(&b),
            })
        }
        S::Copy(source, target) => enc(&Step::Copy {
            source: *source,
            target: *target,
        }),
        S::Fill(target, pattern) => enc(&Step::Fill {
            target: *target,
            pattern: *pattern,
        }),
        S::Barrier => enc(&Step::Barrier),
        S::Raw(bytes) => bytes.clone(),
    }
}

fn function_bytes(f: &Func) -> Vec<u8> {
    let (a, r, t) = (
        enc_all(&f.arguments),
        enc_all(&f.results),
        enc_all(&f.transients),
    );
    let steps = (
        f.steps.len() as u32,
        f.steps.iter().flat_map(step_bytes).collect::<Vec<u8>>(),
    );
    let shapes: Vec<(u32, Vec<u8>)> = f.described.iter().map(|s| enc_all(s)).collect();
    let metas: Vec<Vec<u8>> = shapes
        .iter()
        .map(|shape| {
            enc(&TensorMeta {
                name: "x",
                element: Element::F32,
                shape: seq(shape),
                scale: 0.0,
                zero_point: 0,
            })
        })
        .collect();
    let inputs = (metas.len() as u32, metas.concat());
    let none = (0u32, Vec::new());
    enc(&FunctionDef {
        name: &f.name,
        arguments: seq(&a),
        results: seq(&r),
        inputs: seq(&inputs),
        outputs: seq(&none),
        transients: seq(&t),
        arena_size: f.arena_size,
        steps: seq(&steps),
    })
}

impl Spec {
    fn tables(&self) -> Tables {
        let exes: Vec<ExecutableDef<'_>> = self
            .executables
            .iter()
            .map(|e| ExecutableDef {
                kernel: &e.kernel,
                spirv: e.spirv,
                entry: &e.entry,
            })
            .collect();
        let constants: Vec<ConstantDef<'_>> = self
            .constants
            .iter()
            .map(|(name, data)| ConstantDef { name, data: *data })
            .collect();
        Tables {
            executables: enc_all(&exes),
            constants: enc_all(&constants),
            functions: (
                self.functions.len() as u32,
                self.functions.iter().flat_map(function_bytes).collect(),
            ),
        }
    }

    fn header_with(&self, tables: &Tables) -> Vec<u8> {
        enc(&Header {
            name: &self.name,
            pool_len: self.pool_len.unwrap_or(self.pool.len() as u64),
            executables: seq(&tables.executables),
            constants: seq(&tables.constants),
            functions: seq(&tables.functions),
        })
    }

    fn header(&self) -> Vec<u8> {
        self.header_with(&self.tables())
    }

    /// The file, through the crate's own writer.
    fn bytes(&self) -> Vec<u8> {
        self.bytes_with(&self.tables())
    }

    fn bytes_with(&self, tables: &Tables) -> Vec<u8> {
        let header = Header {
            name: &self.name,
            pool_len: self.pool_len.unwrap_or(self.pool.len() as u64),
            executables: seq(&tables.executables),
            constants: seq(&tables.constants),
            functions: seq(&tables.functions),
        };
        write(&header, &self.pool).expect("the writer encodes any header")
    }
}

/// A file around header bytes that need not decode: preamble, header, zero padding, pool.
fn file(header: &[u8], pool: &[u8]) -> Vec<u8> {
    let pool_at = pool_offset(header.len() as u64) as usize;
    let mut out = Vec::with_capacity(pool_at + pool.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    out.resize(pool_at, 0);
    out.extend_from_slice(pool);
    out
}

fn op(value: Value, offset: u64, length: u64) -> Operand {
    Operand {
        value,
        offset,
        length,
    }
}

const ARG0: Value = Value::Argument(0);
const RES0: Value = Value::Result(0);
const W0: Value = Value::Constant(0);
const T0: Value = Value::Transient(0);
const T1: Value = Value::Transient(1);

/// A small valid module, by hand: two executables (one with SPIR-V), two constants, one
/// function `forward` with a dispatch, a barrier, a copy, a fill and a second dispatch over
/// two transients whose lifetimes overlap at step 2.
///
/// Pool (136 bytes): `w0` at 0 (64 bytes), `b0` at 64 (16 bytes), SPIR-V at 128 (8 bytes).
fn base() -> Spec {
    let mut pool = vec![0u8; 136];
    for (i, b) in pool.iter_mut().enumerate() {
        *b = i as u8;
    }
    Spec {
        name: "base".into(),
        pool,
        pool_len: None,
        executables: vec![
            Exe {
                kernel: "matmul_f32".into(),
                spirv: Some(PoolRange {
                    offset: 128,
                    length: 8,
                }),
                entry: "main".into(),
            },
            Exe {
                kernel: "softmax_f32".into(),
                spirv: None,
                entry: String::new(),
            },
        ],
        constants: vec![
            (
                "w0".into(),
                PoolRange {
                    offset: 0,
                    length: 64,
                },
            ),
            (
                "b0".into(),
                PoolRange {
                    offset: 64,
                    length: 16,
                },
            ),
        ],
        functions: vec![Func {
            name: "forward".into(),
            arguments: vec![64],
            results: vec![16],
            described: vec![],
            transients: vec![
                Transient {
                    offset: 0,
                    size: 64,
                },
                Transient {
                    offset: 64,
                    size: 16,
                },
            ],
            arena_size: 128,
            steps: vec![
                S::Dispatch {
                    executable: 0,
                    workgroups: [1, 1, 1],
                    constants: vec![4, 4],
                    bindings: vec![op(ARG0, 0, 64), op(W0, 0, 64), op(T0, 0, 64)],
                },
                S::Barrier,
                S::Copy(op(T0, 0, 16), op(T1, 0, 16)),
                S::Fill(op(RES0, 0, 16), 0),
                S::Dispatch {
                    executable: 1,
                    workgroups: [1, 1, 1],
                    constants: vec![],
                    bindings: vec![op(T1, 0, 16), op(RES0, 0, 16)],
                },
            ],
        }],
    }
}

/// `base()` with one change to its function.
fn base_fn(change: impl FnOnce(&mut Func)) -> Vec<u8> {
    let mut spec = base();
    change(&mut spec.functions[0]);
    spec.bytes()
}

/// `base()` with one change to step `s` of its function.
fn base_step(s: usize, step: S) -> Vec<u8> {
    base_fn(|f| f.steps[s] = step)
}

/// `base()` with the bindings of its first dispatch replaced.
fn base_bindings(bindings: Vec<Operand>) -> Vec<u8> {
    base_step(
        0,
        S::Dispatch {
            executable: 0,
            workgroups: [1, 1, 1],
            constants: vec![4, 4],
            bindings,
        },
    )
}

fn set(mut bytes: Vec<u8>, at: usize, with: &[u8]) -> Vec<u8> {
    bytes[at..at + with.len()].copy_from_slice(with);
    bytes
}

/// Every malformed case: file name, bytes, and a substring of the error it must give.
fn malformed() -> Vec<(&'static str, Vec<u8>, String)> {
    let good = base().bytes();
    let spec = base();
    let header = spec.header();
    let header_end = PREAMBLE_BYTES + header.len();
    assert_ne!(
        header_end % 64,
        0,
        "the base module needs padding to corrupt"
    );
    let constant = |change: fn(&mut PoolRange)| {
        let mut s = base();
        change(&mut s.constants[0].1);
        s.bytes()
    };
    let exe = |change: fn(&mut Exe)| {
        let mut s = base();
        change(&mut s.executables[0]);
        s.bytes()
    };
    let dispatch = |executable, workgroups: [u32; 3], constants: Vec<u32>| {
        base_step(
            0,
            S::Dispatch {
                executable,
                workgroups,
                constants,
                bindings: vec![op(ARG0, 0, 64), op(W0, 0, 64), op(T0, 0, 64)],
            },
        )
    };

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        // The preamble.
        (
            "empty.bin",
            vec![],
            "preamble: truncated: needs 16 bytes, has 0",
        ),
        (
            "truncated-preamble.bin",
            good[..10].to_vec(),
            "preamble: truncated: needs 16 bytes, has 10",
        ),
        (
            "bad-magic.bin",
            set(good.clone(), 0, b"EMBERMOX"),
            "bad magic",
        ),
        // A module written before functions described their tensors.
        (
            "version-1.bin",
            set(good.clone(), 8, &1u16.to_le_bytes()),
            "format version 1, this build reads version 2",
        ),
        (
            "version-3.bin",
            set(good.clone(), 8, &3u16.to_le_bytes()),
            "format version 3, this build reads version 2",
        ),
        (
            "reserved-nonzero.bin",
            set(good.clone(), 10, &1u16.to_le_bytes()),
            "preamble: does not decode",
        ),
        (
            "header-length-past-end.bin",
            set(good.clone(), 12, &u32::MAX.to_le_bytes()),
            "preamble: truncated: needs 4294967311 bytes",
        ),
        // The header as a whole.
        (
            "header-cut-short.bin",
            file(&header[..header.len() - 3], &spec.pool),
            "header at byte 16: does not decode",
        ),
        (
            "header-trailing-bytes.bin",
            file(&[&header[..], &[0, 0]].concat(), &spec.pool),
            "header at byte 16: 2 unexpected bytes after the end",
        ),
        (
            "name-not-utf8.bin",
            // The name's length, then its bytes: the first of them.
            file(&set(header.clone(), 1, &[0xff]), &spec.pool),
            "header at byte 16: does not decode",
        ),
        // The pool's extent.
        (
            "trailing-bytes.bin",
            [&good[..], &[0]].concat(),
            "preamble: 1 unexpected bytes after the end",
        ),
        (
            "pool-length-overflow.bin",
            {
                let mut s = base();
                s.pool_len = Some(u64::MAX);
                s.bytes()
            },
            "preamble: truncated: needs 18446744073709551615",
        ),
        // Tables.
        (
            "seq-count-overflow.bin",
            {
                let s = base();
                let mut t = s.tables();
                t.constants.0 = 1000;
                s.bytes_with(&t)
            },
            "header at byte 16: constants: count 1000 exceeds",
        ),
        (
            "seq-trailing-element.bin",
            {
                let s = base();
                let mut t = s.tables();
                t.constants.0 = 1;
                s.bytes_with(&t)
            },
            "header at byte 16: 5 unexpected bytes after the end",
        ),
        (
            "seq-element-cut-short.bin",
            {
                let s = base();
                let mut t = s.tables();
                t.functions.1.truncate(t.functions.1.len() - 4);
                s.bytes_with(&t)
            },
            "header at byte 16: does not decode",
        ),
        // Executables and constants.
        (
            "kernel-name-empty.bin",
            exe(|e| e.kernel.clear()),
            "executable 0: kernel name is empty",
        ),
        (
            "spirv-misaligned.bin",
            exe(|e| {
                e.spirv = Some(PoolRange {
                    offset: 130,
                    length: 4,
                })
            }),
            "SPIR-V offset: 130 is not a multiple of 4",
        ),
        (
            "spirv-partial-word.bin",
            exe(|e| {
                e.spirv = Some(PoolRange {
                    offset: 128,
                    length: 6,
                })
            }),
            "SPIR-V length: 6 is not a multiple of 4",
        ),
        (
            "spirv-past-pool.bin",
            exe(|e| {
                e.spirv = Some(PoolRange {
                    offset: 128,
                    length: 16,
                })
            }),
            "SPIR-V: range at 128 of 16 bytes exceeds 136",
        ),
        (
            "spirv-entry-empty.bin",
            exe(|e| e.entry.clear()),
            "SPIR-V entry point is empty",
        ),
        (
            "constant-past-pool.bin",
            constant(|c| c.length = 256),
            "constant 0: constant: range at 0 of 256 bytes exceeds 136",
        ),
        (
            "constant-misaligned.bin",
            constant(|c| c.offset = 4),
            "constant 0: constant offset: 4 is not a multiple of 64",
        ),
        (
            "constant-offset-overflow.bin",
            constant(|c| c.offset = u64::MAX - 63),
            "constant 0: constant: range at 18446744073709551552 of 64 bytes exceeds 136",
        ),
        (
            "constant-empty.bin",
            constant(|c| c.length = 0),
            "constant 0: constant is empty",
        ),
        // Functions.
        (
            "function-name-empty.bin",
            base_fn(|f| f.name.clear()),
            "function 0: function name is empty",
        ),
        (
            "duplicate-function.bin",
            {
                let mut s = base();
                let copy = s.functions[0].clone();
                s.functions.push(copy);
                s.bytes()
            },
            "function 1: name already used by function 0",
        ),
        (
            "too-many-values.bin",
            base_fn(|f| f.arguments = vec![64; 63]),
            "arguments and results: count 64 exceeds 63",
        ),
        (
            // 100 transients, more than validation holds at once: the pair is found
            // across its windows.
            "plan-overlap-past-the-first-window.bin",
            base_fn(|f| {
                f.transients = (0..100)
                    .map(|t| Transient {
                        offset: if t == 90 { 40 } else { 4 * t },
                        size: 4,
                    })
                    .collect();
                f.arena_size = 400;
                f.steps = vec![S::Copy(
                    op(Value::Transient(10), 0, 4),
                    op(Value::Transient(90), 0, 4),
                )];
            }),
            "function 0 transient 90: shares arena bytes with transient 10 while both are live",
        ),
        (
            "argument-empty.bin",
            base_fn(|f| f.results[0] = 0),
            "argument or result is empty",
        ),
        // Descriptions of the arguments.
        (
            "description-count.bin",
            base_fn(|f| f.described = vec![vec![16], vec![16]]),
            "arguments: 2 described, but there are 1",
        ),
        (
            "description-size.bin",
            base_fn(|f| f.described = vec![vec![8]]),
            "arguments 0: its shape holds 32 bytes, the value 64",
        ),
        // The memory plan.
        (
            "transient-empty.bin",
            base_fn(|f| f.transients[1].size = 0),
            "function 0 transient 1: transient is empty",
        ),
        (
            "transient-misaligned.bin",
            base_fn(|f| f.transients[1].offset = 66),
            "transient offset: 66 is not a multiple of 4",
        ),
        (
            "transient-past-arena.bin",
            base_fn(|f| f.arena_size = 72),
            "function 0 transient 1: transient: range at 64 of 16 bytes exceeds 72",
        ),
        (
            "plan-overlap.bin",
            base_fn(|f| f.transients[1].offset = 48),
            "function 0 transient 1: shares arena bytes with transient 0 while both are live",
        ),
        // Steps.
        (
            "step-not-a-step.bin",
            base_step(1, S::Raw(vec![9])),
            "function 0: does not decode",
        ),
        (
            "step-unknown-executable.bin",
            dispatch(5, [1, 1, 1], vec![]),
            "function 0 step 0: refers to executable 5, but there are 2",
        ),
        (
            "workgroups-zero.bin",
            dispatch(0, [1, 0, 1], vec![]),
            "workgroup count = 0 is outside 1..=65535",
        ),
        (
            "workgroups-too-many.bin",
            dispatch(0, [65_536, 1, 1], vec![]),
            "workgroup count = 65536 is outside 1..=65535",
        ),
        (
            "too-many-push-constants.bin",
            dispatch(0, [1, 1, 1], vec![7; 65]),
            "push constants: count 65 exceeds 64",
        ),
        (
            "too-many-bindings.bin",
            base_bindings(vec![op(ARG0, 0, 4); 17]),
            "bindings: count 17 exceeds 16",
        ),
        (
            "binding-unknown-transient.bin",
            base_bindings(vec![op(Value::Transient(7), 0, 4)]),
            "refers to transient 7, but there are 2",
        ),
        (
            "binding-unknown-argument.bin",
            base_bindings(vec![op(Value::Argument(3), 0, 4)]),
            "refers to argument 3, but there are 1",
        ),
        (
            "binding-unknown-constant.bin",
            base_bindings(vec![op(Value::Constant(2), 0, 4)]),
            "refers to constant 2, but there are 2",
        ),
        (
            "operand-past-value.bin",
            base_bindings(vec![op(ARG0, 32, 64)]),
            "function 0 step 0: argument: range at 32 of 64 bytes exceeds 64",
        ),
        (
            "operand-offset-overflow.bin",
            base_bindings(vec![op(W0, u64::MAX - 3, 8)]),
            "constant: range at 18446744073709551612 of 8 bytes exceeds 64",
        ),
        (
            "operand-misaligned.bin",
            base_bindings(vec![op(ARG0, 2, 4)]),
            "operand offset: 2 is not a multiple of 4",
        ),
        (
            "operand-empty.bin",
            base_bindings(vec![op(ARG0, 0, 0)]),
            "operand is empty",
        ),
        (
            "fill-writes-constant.bin",
            base_step(3, S::Fill(op(W0, 0, 16), 0)),
            "function 0 step 3: writes constant 0, which is read-only",
        ),
        (
            "fill-length-misaligned.bin",
            base_step(3, S::Fill(op(RES0, 0, 6), 0)),
            "fill length: 6 is not a multiple of 4",
        ),
        (
            "copy-overlapping.bin",
            base_step(2, S::Copy(op(T0, 0, 32), op(T0, 16, 32))),
            "function 0 step 2: copy of 32 bytes into 32 bytes, or overlapping",
        ),
        (
            "copy-length-mismatch.bin",
            base_step(2, S::Copy(op(T0, 0, 16), op(T1, 0, 8))),
            "copy of 16 bytes into 8 bytes",
        ),
        (
            "copy-writes-constant.bin",
            base_step(2, S::Copy(op(T0, 0, 16), op(W0, 0, 16))),
            "function 0 step 2: writes constant 0",
        ),
    ];
    let mut cases: Vec<_> = cases
        .into_iter()
        .map(|(name, bytes, error)| (name, bytes, error.to_string()))
        .collect();
    cases.push((
        "nonzero-padding.bin",
        set(good.clone(), header_end, &[1]),
        format!("header at byte {header_end}: does not decode"),
    ));
    let n = good.len();
    cases.push((
        "pool-truncated.bin",
        good[..n - 1].to_vec(),
        format!("preamble: truncated: needs {n} bytes, has {}", n - 1),
    ));
    cases.sort_by_key(|c| c.0);
    cases
}

/// Valid modules for the fuzzer to start from.
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    // The smallest useful module: one function, one dispatch.
    let mut b = ModuleBuilder::new("tiny");
    let double = b.executable("add_f32");
    let f = b.function("double", &[16], &[16]);
    let bindings = [b.argument(f, 0), b.argument(f, 0), b.result(f, 0)];
    b.dispatch(f, double, [1, 1, 1], &[], &bindings);
    let tiny = b.finish().expect("tiny builds").bytes;

    // A two-layer perceptron on 8 inputs: x·W0 + b0 → relu → ·W1 + b1 → softmax, with a
    // second function that shares the executables and constants.
    let f32s =
        |values: &[f32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    let mut b = ModuleBuilder::new("mlp");
    let matmul = b.executable_with_spirv("matmul_f32", &[0x0723_0203, 0x0001_0000, 7, 42], "main");
    let add = b.executable("add_f32");
    let relu = b.executable("relu_f32");
    let softmax = b.executable("softmax_f32");
    let w0 = b.constant("w0", &f32s(&[0.25; 8 * 4]));
    let b0 = b.constant("b0", &f32s(&[0.5; 4]));
    let w1 = b.constant("w1", &f32s(&[-1.0, 1.0, 0.5, 2.0].repeat(4)));
    let b1 = b.constant("b1", &f32s(&[0.0; 4]));
    let f = b.function("forward", &[32], &[16]);
    let (x, y) = (b.argument(f, 0), b.result(f, 0));
    let h0 = b.transient(f, 16);
    let h1 = b.transient(f, 16);
    let h2 = b.transient(f, 16);
    let logits = b.transient(f, 16);
    let scratch = b.transient(f, 64);
    b.fill(f, scratch, 0);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 8, 4], &[x, w0, h0, scratch]);
    b.dispatch(f, add, [1, 1, 1], &[4], &[h0, b0, h1]);
    b.barrier(f);
    b.dispatch(f, relu, [1, 1, 1], &[4], &[h1, h2]);
    b.dispatch(f, matmul, [1, 1, 1], &[1, 4, 4], &[h2, w1, h0]);
    b.dispatch(f, add, [1, 1, 1], &[4], &[h0, b1, logits]);
    b.barrier(f);
    b.dispatch(f, softmax, [1, 1, 1], &[4], &[logits, y]);
    let g = b.function("first_layer", &[32], &[16, 16]);
    let (x, y, z) = (b.argument(g, 0), b.result(g, 0), b.result(g, 1));
    let t = b.transient(g, 16);
    b.dispatch(g, matmul, [1, 1, 1], &[1, 8, 4], &[x, w0, t]);
    b.dispatch(g, add, [1, 1, 1], &[4], &[t, b0, y]);
    b.copy(g, y, z);
    b.fill(g, t, 0x3f80_0000);
    let mlp = b.finish().expect("mlp builds").bytes;

    // A chain of 80 copies through 79 transients, more than validation holds at once,
    // each live for two steps.
    let mut b = ModuleBuilder::new("chain");
    let f = b.function("forward", &[16], &[16]);
    let mut value = b.argument(f, 0);
    for _ in 0..79 {
        let next = b.transient(f, 16);
        b.copy(f, value, next);
        value = next;
    }
    let y = b.result(f, 0);
    b.copy(f, value, y);
    let chain = b.finish().expect("chain builds").bytes;

    vec![
        ("base.bin", base().bytes()),
        ("chain.bin", chain),
        ("mlp.bin", mlp),
        ("tiny.bin", tiny),
    ]
}

// ---------------------------------------------------------------------------------------
// Files.
// ---------------------------------------------------------------------------------------

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/module")
}

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/module")
}

/// The `.bin` files of a directory, by name.
fn bins(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .map(|p| {
            let name = p
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            let bytes =
                std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
            (name, bytes)
        })
        .collect()
}

/// `expected.txt`: `file.bin: substring of the error`, one a line (`#` starts a comment).
fn expectations() -> BTreeMap<String, String> {
    let path = corpus_dir().join("expected.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (file, expected) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("expected.txt line {}: no `: ` in {line:?}", n + 1));
        let earlier = out.insert(file.to_string(), expected.to_string());
        assert!(earlier.is_none(), "expected.txt: {file} listed twice");
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------------------

/// Rewrites `tests/corpus/module` and `fuzz/corpus/module` from the generators above.
#[test]
#[ignore = "rewrites the committed corpora; run by hand after changing the format"]
fn regenerate_corpus() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).expect("creating the corpus directory");
    for name in bins(&dir).keys() {
        std::fs::remove_file(dir.join(name)).expect("removing an old case");
    }
    let mut expected = String::from(
        "# Each malformed module here and a substring of the error `Module::parse` must give.\n\
         # Generated by `cargo test -p ember-tests --test module_corpus -- --ignored \
         regenerate_corpus`.\n",
    );
    for (name, bytes, error) in malformed() {
        std::fs::write(dir.join(name), &bytes).expect("writing a case");
        expected.push_str(&format!("{name}: {error}\n"));
    }
    std::fs::write(dir.join("expected.txt"), expected).expect("writing expected.txt");

    let dir = seeds_dir();
    std::fs::create_dir_all(&dir).expect("creating the seed directory");
    for (name, bytes) in seeds() {
        std::fs::write(dir.join(name), &bytes).expect("writing a seed");
    }
}

#[test]
fn generators_agree_with_the_crate() {
    // The hand encoder's valid module is valid, and the raw file writer is the crate's.
    let spec = base();
    let bytes = spec.bytes();
    assert_eq!(file(&spec.header(), &spec.pool), bytes);
    let module = Module::parse(&bytes).unwrap_or_else(|e| panic!("base: {e}"));
    assert_eq!(module.function("forward").map(|(i, _)| i), Some(0));
    for (name, bytes, _) in malformed() {
        assert!(bytes.len() < 4096, "{name} is {} bytes", bytes.len());
    }
}

#[test]
fn every_malformed_module_is_refused_for_its_reason() {
    let cases = bins(&corpus_dir());
    let expected = expectations();
    assert!(cases.len() >= 25, "only {} cases", cases.len());
    for file in expected.keys() {
        assert!(
            cases.contains_key(file),
            "expected.txt names {file}, which is missing"
        );
    }
    for (name, bytes) in &cases {
        let want = expected
            .get(name)
            .unwrap_or_else(|| panic!("{name} has no line in expected.txt"));
        let err = match Module::parse(bytes) {
            Ok(_) => panic!("{name} parsed, but it is malformed: {}", hex(bytes)),
            Err(e) => e.to_string(),
        };
        assert!(!err.is_empty(), "{name}: empty error message");
        assert!(
            err.contains(want.as_str()),
            "{name}: got `{err}`, want it to contain `{want}`"
        );
    }
}

#[test]
fn corpus_matches_its_generator() {
    let committed = bins(&corpus_dir());
    let generated = malformed();
    let names: Vec<&str> = generated.iter().map(|c| c.0).collect();
    assert_eq!(
        committed.keys().map(String::as_str).collect::<Vec<_>>(),
        names
    );
    let expected = expectations();
    for (name, bytes, error) in &generated {
        assert_eq!(
            &committed[*name], bytes,
            "{name} differs from its generator: regenerate"
        );
        assert_eq!(
            expected[*name], *error,
            "{name}'s expectation differs from its generator"
        );
    }
    let committed = bins(&seeds_dir());
    for (name, bytes) in seeds() {
        assert_eq!(
            committed.get(name),
            Some(&bytes),
            "seed {name} differs from its generator"
        );
    }
}

#[test]
fn every_fuzz_seed_parses() {
    let seeds = bins(&seeds_dir());
    assert!(seeds.len() >= 2, "only {} seeds", seeds.len());
    for (name, bytes) in &seeds {
        let module = Module::parse(bytes).unwrap_or_else(|e| panic!("seed {name}: {e}"));
        walk(&module);
        module.check_kernels(|_| true).expect("no kernel check");
        module
            .check_arena(module.sizes().max_arena)
            .expect("its own arena fits");
        assert_eq!(module.sizes().file, bytes.len() as u64);
    }
}

/// Everything a parsed module offers, so a mutation that parses is used as a driver would.
fn walk(module: &Module<'_>) -> usize {
    let mut seen = 0;
    for exe in module.executables().iter() {
        seen += exe.kernel.len();
        if let Some(spirv) = exe.spirv {
            assert_eq!(module.pool_bytes(spirv).len() as u64, spirv.length);
        }
    }
    for c in module.constants().iter() {
        assert_eq!(module.pool_bytes(c.data).len() as u64, c.data.length);
    }
    for f in module.functions().iter() {
        assert_eq!(module.function(f.name).map(|(_, g)| g), Some(f));
        seen += f.arguments.iter().count() + f.results.iter().count();
        seen += f.transients.iter().count();
        for step in f.steps.iter() {
            seen += 1;
            if let Step::Dispatch {
                constants,
                bindings,
                ..
            } = step
            {
                seen += constants.iter().count() + bindings.iter().count();
            }
        }
    }
    let sizes = module.sizes();
    let _ = module.check_kernels(|k| k.len() % 2 == 0);
    let _ = module.check_arena(sizes.max_arena / 2);
    seen
}

/// Parses `bytes`, and walks it if it parses; a panic fails with the input in hex.
fn parse_no_panic(what: &str, bytes: &[u8]) -> bool {
    let result = catch_unwind(AssertUnwindSafe(|| match Module::parse(bytes) {
        Ok(module) => {
            walk(&module);
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }));
    result.unwrap_or_else(|_| panic!("{what}: Module::parse panicked on {}", hex(bytes)))
}

#[test]
fn mutations_never_panic() {
    let mut inputs: Vec<(&str, Vec<u8>)> = seeds();
    inputs.retain(|(name, _)| *name != "tiny.bin");
    let mut parsed = 0;
    let mut tried = 0;
    for (name, good) in &inputs {
        assert!(parse_no_panic(name, good));
        for len in 0..good.len() {
            tried += 1;
            parsed += usize::from(parse_no_panic(
                &format!("{name} cut to {len}"),
                &good[..len],
            ));
        }
        let mut bytes = good.clone();
        for at in 0..good.len() {
            let original = good[at];
            for value in [
                original ^ 0x01,
                original ^ 0x80,
                original.wrapping_add(1),
                original.wrapping_sub(1),
                0x00,
                0x7f,
                0xff,
            ] {
                if value == original {
                    continue;
                }
                bytes[at] = value;
                tried += 1;
                parsed += usize::from(parse_no_panic(
                    &format!("{name}[{at}] = {value:#04x}"),
                    &bytes,
                ));
            }
            bytes[at] = original;
        }
    }
    // Some mutations (pool bytes, pattern words) keep a module valid; most do not.
    assert!(
        parsed > 0 && parsed < tried,
        "{parsed} of {tried} mutations parsed"
    );
}
