//! `ModuleBuilder`: builds a module on the host (needs `alloc`) — executables, constants in
//! a 64-byte-aligned pool, functions whose transient values the planner places in one arena.

use super::error::ModuleError;
use super::file;
use super::format::{
    ConstantDef, Element, ExecutableDef, FunctionDef, Header, Operand, PoolRange, Step, TensorMeta,
    Transient, Value, POOL_ALIGN,
};
use super::plan::{self, Lifetime, Plan};
use super::seq::Seq;
use super::Module;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

/// Alignment of every transient's offset in the arena, unless the builder is given another
/// ([`ModuleBuilder::transient_alignment`]): enough for any Vulkan device's storage-buffer
/// offsets.
pub const TRANSIENT_ALIGN: u64 = 64;

/// A built module: its bytes and each function's memory plan.
#[derive(Debug, Clone)]
pub struct Built {
    /// The module file.
    pub bytes: Vec<u8>,
    /// Per function, in order: where its transients went and the arena's peak.
    pub plans: Vec<Plan>,
}

#[derive(Debug, Clone)]
enum StepSpec {
    Dispatch {
        executable: u32,
        workgroups: [u32; 3],
        constants: Vec<u32>,
        bindings: Vec<Operand>,
    },
    Copy(Operand, Operand),
    Fill(Operand, u32),
    Barrier,
}

/// What an argument or result holds ([`TensorMeta`], owned).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    /// The tensor's name.
    pub name: String,
    /// Its element type.
    pub element: Element,
    /// Its dimensions.
    pub shape: Vec<u32>,
    /// Quantization scale (0 if none).
    pub scale: f32,
    /// Quantization zero point.
    pub zero_point: i32,
}

#[derive(Debug, Clone)]
struct FunctionSpec {
    name: String,
    arguments: Vec<u64>,
    results: Vec<u64>,
    inputs: Vec<TensorSpec>,
    outputs: Vec<TensorSpec>,
    transients: Vec<u64>,
    steps: Vec<StepSpec>,
}

#[derive(Debug, Clone)]
struct ExecutableSpec {
    kernel: String,
    spirv: Option<(PoolRange, String)>,
}

/// Builds a module. Indices it hands out refer to what was added, in order; misuse (an
/// index that does not exist, a range out of bounds) surfaces from [`ModuleBuilder::finish`],
/// which validates its own output.
#[derive(Debug, Clone)]
pub struct ModuleBuilder {
    name: String,
    executables: Vec<ExecutableSpec>,
    constants: Vec<(String, PoolRange)>,
    pool: Vec<u8>,
    functions: Vec<FunctionSpec>,
    transient_alignment: u64,
}

/// A function being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionId(pub u32);

impl ModuleBuilder {
    /// An empty module called `name`.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            executables: Vec::new(),
            constants: Vec::new(),
            pool: Vec::new(),
            functions: Vec::new(),
            transient_alignment: TRANSIENT_ALIGN,
        }
    }

    /// Aligns transients' offsets in the arena to `alignment` (a power of two, at least 4)
    /// instead of [`TRANSIENT_ALIGN`]: a smaller arena for devices whose bindings need
    /// less (the local driver's: 16 bytes). Other values are ignored.
    pub fn transient_alignment(&mut self, alignment: u64) -> &mut Self {
        if alignment.is_power_of_two() && alignment >= 4 {
            self.transient_alignment = alignment;
        }
        self
    }

    fn pool_push(&mut self, bytes: &[u8]) -> PoolRange {
        let offset = self.pool.len().div_ceil(POOL_ALIGN as usize) * POOL_ALIGN as usize;
        self.pool.resize(offset, 0);
        self.pool.extend_from_slice(bytes);
        PoolRange {
            offset: offset as u64,
            length: bytes.len() as u64,
        }
    }

    /// Adds an executable: the local kernel `kernel`; returns its index.
    pub fn executable(&mut self, kernel: &str) -> u32 {
        self.executables.push(ExecutableSpec {
            kernel: kernel.into(),
            spirv: None,
        });
        self.executables.len() as u32 - 1
    }

    /// Adds an executable with a SPIR-V form too (entry point `entry`); returns its index.
    pub fn executable_with_spirv(&mut self, kernel: &str, spirv: &[u32], entry: &str) -> u32 {
        let bytes: Vec<u8> = spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        let range = self.pool_push(&bytes);
        self.executables.push(ExecutableSpec {
            kernel: kernel.into(),
            spirv: Some((range, entry.into())),
        });
        self.executables.len() as u32 - 1
    }

    /// Adds a constant (copied into the pool, 64-byte aligned); returns an operand over all
    /// of it.
    pub fn constant(&mut self, name: &str, bytes: &[u8]) -> Operand {
        let range = self.pool_push(bytes);
        self.constants.push((name.into(), range));
        let index = self.constants.len() as u32 - 1;
        whole(Value::Constant(index), range.length)
    }

    /// Describes `f`'s arguments and results as tensors (one each, or none), for callers
    /// that quantize inputs and dequantize outputs.
    pub fn describe(&mut self, f: FunctionId, inputs: &[TensorSpec], outputs: &[TensorSpec]) {
        let spec = self.spec(f);
        spec.inputs = inputs.into();
        spec.outputs = outputs.into();
    }

    /// Adds a function with argument and result sizes in bytes.
    pub fn function(&mut self, name: &str, arguments: &[u64], results: &[u64]) -> FunctionId {
        self.functions.push(FunctionSpec {
            name: name.into(),
            arguments: arguments.into(),
            results: results.into(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            transients: Vec::new(),
            steps: Vec::new(),
        });
        FunctionId(self.functions.len() as u32 - 1)
    }

    fn spec(&mut self, f: FunctionId) -> &mut FunctionSpec {
        let last = self.functions.len() - 1;
        &mut self.functions[(f.0 as usize).min(last)]
    }

    /// All of argument `n` of `f` (size 0 if there is none: `finish` then fails).
    pub fn argument(&self, f: FunctionId, n: u32) -> Operand {
        let size = self.size_of(f, |s| &s.arguments, n);
        whole(Value::Argument(n), size)
    }

    /// All of result `n` of `f`.
    pub fn result(&self, f: FunctionId, n: u32) -> Operand {
        let size = self.size_of(f, |s| &s.results, n);
        whole(Value::Result(n), size)
    }

    fn size_of(&self, f: FunctionId, list: fn(&FunctionSpec) -> &Vec<u64>, n: u32) -> u64 {
        self.functions
            .get(f.0 as usize)
            .and_then(|s| list(s).get(n as usize).copied())
            .unwrap_or(0)
    }

    /// A new transient value of `size` bytes in `f`; the planner gives it its offset.
    pub fn transient(&mut self, f: FunctionId, size: u64) -> Operand {
        let spec = self.spec(f);
        spec.transients.push(size);
        whole(Value::Transient(spec.transients.len() as u32 - 1), size)
    }

    /// Appends a dispatch to `f`.
    pub fn dispatch(
        &mut self,
        f: FunctionId,
        executable: u32,
        workgroups: [u32; 3],
        constants: &[u32],
        bindings: &[Operand],
    ) {
        self.spec(f).steps.push(StepSpec::Dispatch {
            executable,
            workgroups,
            constants: constants.into(),
            bindings: bindings.into(),
        });
    }

    /// Appends a copy to `f`.
    pub fn copy(&mut self, f: FunctionId, source: Operand, target: Operand) {
        self.spec(f).steps.push(StepSpec::Copy(source, target));
    }

    /// Appends a fill with a 4-byte pattern to `f`.
    pub fn fill(&mut self, f: FunctionId, target: Operand, pattern: u32) {
        self.spec(f).steps.push(StepSpec::Fill(target, pattern));
    }

    /// Appends a barrier to `f`.
    pub fn barrier(&mut self, f: FunctionId) {
        self.spec(f).steps.push(StepSpec::Barrier);
    }

    /// Plans every function's arena, encodes the module, and validates the result.
    pub fn finish(&self) -> Result<Built, ModuleError> {
        let mut plans = Vec::with_capacity(self.functions.len());
        let mut functions = Vec::new();
        for spec in &self.functions {
            let plan = plan_function(spec, self.transient_alignment);
            encode_function(spec, &plan, &mut functions);
            plans.push(plan);
        }
        let mut executables = Vec::new();
        for e in &self.executables {
            let def = ExecutableDef {
                kernel: &e.kernel,
                spirv: e.spirv.as_ref().map(|(r, _)| *r),
                entry: e.spirv.as_ref().map_or("", |(_, entry)| entry),
            };
            push(&def, &mut executables);
        }
        let mut constants = Vec::new();
        for (name, data) in &self.constants {
            push(&ConstantDef { name, data: *data }, &mut constants);
        }
        let header = Header {
            name: &self.name,
            pool_len: self.pool.len() as u64,
            executables: Seq::from_encoded(self.executables.len() as u32, &executables),
            constants: Seq::from_encoded(self.constants.len() as u32, &constants),
            functions: Seq::from_encoded(self.functions.len() as u32, &functions),
        };
        let bytes = file::write(&header, &self.pool).unwrap_or_default();
        Module::parse(&bytes)?;
        Ok(Built { bytes, plans })
    }
}

fn whole(value: Value, length: u64) -> Operand {
    Operand {
        value,
        offset: 0,
        length,
    }
}

/// Appends `value`'s postcard encoding (writing to a Vec cannot fail).
fn push<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    if let Ok(bytes) = postcard::to_allocvec(value) {
        out.extend_from_slice(&bytes);
    }
}

fn encoded<T: Serialize>(items: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        push(item, &mut out);
    }
    out
}

fn operands(step: &StepSpec) -> Vec<Operand> {
    match step {
        StepSpec::Dispatch { bindings, .. } => bindings.clone(),
        StepSpec::Copy(a, b) => alloc::vec![*a, *b],
        StepSpec::Fill(t, _) => alloc::vec![*t],
        StepSpec::Barrier => Vec::new(),
    }
}

fn plan_function(spec: &FunctionSpec, alignment: u64) -> Plan {
    let mut lifetimes: Vec<Lifetime> = spec
        .transients
        .iter()
        .map(|&size| Lifetime {
            size,
            first: u32::MAX,
            last: 0,
        })
        .collect();
    for (s, step) in spec.steps.iter().enumerate() {
        for op in operands(step) {
            if let Value::Transient(t) = op.value {
                if let Some(l) = lifetimes.get_mut(t as usize) {
                    l.first = l.first.min(s as u32);
                    l.last = l.last.max(s as u32);
                }
            }
        }
    }
    for l in &mut lifetimes {
        if l.first > l.last {
            // Never used: lives nowhere, overlaps nothing.
            *l = Lifetime {
                size: l.size,
                first: u32::MAX,
                last: u32::MAX,
            };
        }
    }
    plan::plan(&lifetimes, alignment)
}

fn encode_function(spec: &FunctionSpec, plan: &Plan, out: &mut Vec<u8>) {
    let transients: Vec<Transient> = spec
        .transients
        .iter()
        .zip(&plan.offsets)
        .map(|(&size, &offset)| Transient { offset, size })
        .collect();
    let mut steps = Vec::new();
    for step in &spec.steps {
        match step {
            StepSpec::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
            } => {
                let c = encoded(constants);
                let b = encoded(bindings);
                let step = Step::Dispatch {
                    executable: *executable,
                    workgroups: *workgroups,
                    constants: Seq::from_encoded(constants.len() as u32, &c),
                    bindings: Seq::from_encoded(bindings.len() as u32, &b),
                };
                push(&step, &mut steps);
            }
            StepSpec::Copy(source, target) => push(
                &Step::Copy {
                    source: *source,
                    target: *target,
                },
                &mut steps,
            ),
            StepSpec::Fill(target, pattern) => push(
                &Step::Fill {
                    target: *target,
                    pattern: *pattern,
                },
                &mut steps,
            ),
            StepSpec::Barrier => push(&Step::<'_>::Barrier, &mut steps),
        }
    }
    let (a, r, t) = (
        encoded(&spec.arguments),
        encoded(&spec.results),
        encoded(&transients),
    );
    let shapes: Vec<Vec<u8>> = spec
        .inputs
        .iter()
        .chain(&spec.outputs)
        .map(|m| encoded(&m.shape))
        .collect();
    fn meta<'a>((m, shape): (&'a TensorSpec, &'a Vec<u8>)) -> TensorMeta<'a> {
        TensorMeta {
            name: &m.name,
            element: m.element,
            shape: Seq::from_encoded(m.shape.len() as u32, shape),
            scale: m.scale,
            zero_point: m.zero_point,
        }
    }
    let (input_shapes, output_shapes) = shapes.split_at(spec.inputs.len());
    let inputs: Vec<TensorMeta<'_>> = spec.inputs.iter().zip(input_shapes).map(meta).collect();
    let outputs: Vec<TensorMeta<'_>> = spec.outputs.iter().zip(output_shapes).map(meta).collect();
    let (i, o) = (encoded(&inputs), encoded(&outputs));
    let def = FunctionDef {
        name: &spec.name,
        arguments: Seq::from_encoded(spec.arguments.len() as u32, &a),
        results: Seq::from_encoded(spec.results.len() as u32, &r),
        inputs: Seq::from_encoded(inputs.len() as u32, &i),
        outputs: Seq::from_encoded(outputs.len() as u32, &o),
        transients: Seq::from_encoded(transients.len() as u32, &t),
        arena_size: plan.peak,
        steps: Seq::from_encoded(spec.steps.len() as u32, &steps),
    };
    push(&def, out);
}
