//! What the tests share: the reference models, and rewriting a model through the schema's
//! owned types.

#![allow(dead_code)]

use ember_import::tflite;
use planus::ReadAsRoot;
use std::path::{Path, PathBuf};

/// A reference model and what the tests expect of it.
pub struct Reference {
    /// Path under the models folder.
    pub path: &'static str,
    /// TFLM's activation arena ("head") for it, from the models README.
    pub tflm_head: Option<usize>,
}

/// The reference models of `../shared/models/README.md`.
pub const REFERENCES: &[Reference] = &[
    Reference {
        path: "tflm/hello_world_int8.tflite",
        tflm_head: Some(32),
    },
    Reference {
        path: "tflm/hello_world_float.tflite",
        tflm_head: None,
    },
    Reference {
        path: "tflm/micro_speech_quantized.tflite",
        tflm_head: Some(5_968),
    },
    Reference {
        path: "tflm/person_detect.tflite",
        tflm_head: Some(55_296),
    },
    Reference {
        path: "tflm/magic_wand.tflite",
        tflm_head: Some(13_824),
    },
    Reference {
        path: "tflm/simple_add_model.tflite",
        tflm_head: None,
    },
    Reference {
        path: "mlperf_tiny/kws_ref_model.tflite",
        tflm_head: Some(16_000),
    },
    Reference {
        path: "mlperf_tiny/pretrainedResnet_quant.tflite",
        tflm_head: Some(49_152),
    },
    Reference {
        path: "mlperf_tiny/ad01_int8.tflite",
        tflm_head: Some(768),
    },
    Reference {
        path: "microflow/sine.tflite",
        tflm_head: None,
    },
];

/// The models folder: `$EMBER_MODELS`, else `../shared/models` from the workspace root.
pub fn models_dir() -> PathBuf {
    match std::env::var_os("EMBER_MODELS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models"),
    }
}

/// The bytes of one reference model, or `None` (with a loud SKIPPED line) when the models
/// are not there.
pub fn model(path: &str) -> Option<Vec<u8>> {
    let dir = models_dir();
    let file = dir.join(path);
    match std::fs::read(&file) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            eprintln!(
                "SKIPPED: reference models not found at {} ({}: {e}); set EMBER_MODELS",
                dir.display(),
                file.display()
            );
            None
        }
    }
}

/// Every reference model with its bytes, or `None` (with a loud SKIPPED line) when the
/// models are not there.
pub fn all_models() -> Option<Vec<(&'static Reference, Vec<u8>)>> {
    REFERENCES
        .iter()
        .map(|r| model(r.path).map(|bytes| (r, bytes)))
        .collect()
}

/// The model as the schema's owned types.
pub fn owned(bytes: &[u8]) -> tflite::Model {
    let model = tflite::ModelRef::read_as_root(bytes).expect("a reference model reads");
    tflite::Model::try_from(model).expect("a reference model converts")
}

/// Serializes a model with the TFL3 identifier.
///
/// planus 1.3's `Builder::finish` with an identifier writes it at bytes 0..4 and the root
/// offset (relative to byte 4) at 4..8; FlatBuffers puts the root offset first. So the
/// bytes are swapped into FlatBuffers' order here.
pub fn serialize(model: &tflite::Model) -> Vec<u8> {
    let mut builder = planus::Builder::new();
    let mut bytes = builder.finish(model, Some(*b"TFL3")).to_vec();
    assert_eq!(&bytes[0..4], b"TFL3", "planus' header layout changed");
    let root = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) + 4;
    bytes[0..4].copy_from_slice(&root.to_le_bytes());
    bytes[4..8].copy_from_slice(b"TFL3");
    bytes
}

/// `bytes` rewritten by `edit`.
pub fn rewrite(bytes: &[u8], edit: impl FnOnce(&mut tflite::Model)) -> Vec<u8> {
    let mut model = owned(bytes);
    edit(&mut model);
    serialize(&model)
}

/// The model's one subgraph.
pub fn subgraph(model: &mut tflite::Model) -> &mut tflite::SubGraph {
    &mut model.subgraphs.as_mut().expect("subgraphs")[0]
}

/// Tensor `i` of the model's subgraph.
pub fn tensor(model: &mut tflite::Model, i: usize) -> &mut tflite::Tensor {
    &mut subgraph(model).tensors.as_mut().expect("tensors")[i]
}

/// Op `i` of the model's subgraph.
pub fn op(model: &mut tflite::Model, i: usize) -> &mut tflite::Operator {
    &mut subgraph(model).operators.as_mut().expect("operators")[i]
}

/// Checks what a memory plan promises: offsets aligned, buffers inside the arena, buffers
/// whose lives overlap disjoint in memory, every non-constant tensor an op or the graph uses
/// placed, a view sharing its input's storage unless both are graph inputs or outputs.
pub fn check_plan(graph: &ember_import::Graph<'_>, plan: &ember_import::MemoryPlan) {
    let buffers = plan.buffers();
    for (i, b) in buffers.iter().enumerate() {
        assert_eq!(b.offset % plan.alignment(), 0, "buffer {i} misaligned");
        assert!(b.end() <= plan.arena_size(), "buffer {i} past the arena");
        assert!(b.first_op <= b.last_op);
        for (j, c) in buffers.iter().enumerate().skip(i + 1) {
            if b.overlaps_in_time(c) {
                assert!(
                    b.end() <= c.offset || c.end() <= b.offset,
                    "buffers {i} and {j} live together and overlap in memory"
                );
            }
        }
        for id in &b.tensors {
            assert_eq!(graph.tensor(*id).byte_size(), b.size);
        }
    }
    let used = graph.inputs().iter().chain(graph.outputs()).copied().chain(
        graph
            .ops()
            .iter()
            .flat_map(|op| op.input_ids().chain(op.outputs.iter().copied())),
    );
    for id in used {
        let t = graph.tensor(id);
        match plan.placement(id) {
            Some(p) => {
                assert!(!t.is_constant(), "constant {id} placed");
                assert_eq!(p.size, t.byte_size());
                assert!(buffers[p.buffer].tensors.contains(&id));
            }
            None => assert!(t.is_constant(), "{id} not placed"),
        }
    }
    // Each op's outputs live apart from its inputs, views aside.
    for (i, op) in graph.ops().iter().enumerate() {
        for out in &op.outputs {
            let po = plan.placement(*out).expect("outputs are placed");
            let b = &buffers[po.buffer];
            assert!(
                b.first_op <= i && i <= b.last_op,
                "op {i} writes outside its output's life"
            );
            for input in op.input_ids().filter(|id| !graph.tensor(*id).is_constant()) {
                let pi = plan.placement(input).expect("inputs are placed");
                if op.kind.is_view() && pi.buffer == po.buffer {
                    continue;
                }
                assert!(po.offset + po.size <= pi.offset || pi.offset + pi.size <= po.offset);
            }
        }
    }
    let visible =
        |id: &ember_import::TensorId| graph.inputs().contains(id) || graph.outputs().contains(id);
    for b in buffers {
        assert!(
            b.tensors.iter().filter(|id| visible(id)).count() <= 1,
            "caller-visible tensors share a buffer"
        );
    }
}

/// A small model built from scratch, for the operators the reference models do not use.
pub struct Synth {
    tensors: Vec<tflite::Tensor>,
    buffers: Vec<tflite::Buffer>,
    codes: Vec<tflite::OperatorCode>,
    ops: Vec<tflite::Operator>,
}

impl Default for Synth {
    fn default() -> Self {
        Self::new()
    }
}

impl Synth {
    /// No tensors yet; buffer 0 is the empty sentinel.
    pub fn new() -> Self {
        Self {
            tensors: Vec::new(),
            buffers: vec![tflite::Buffer::default()],
            codes: Vec::new(),
            ops: Vec::new(),
        }
    }

    fn push(&mut self, tensor: tflite::Tensor) -> i32 {
        self.tensors.push(tensor);
        (self.tensors.len() - 1) as i32
    }

    /// An activation (no data), quantized per tensor where `q` says.
    pub fn tensor(&mut self, ty: tflite::TensorType, shape: &[i32], q: Option<(f32, i64)>) -> i32 {
        let name = format!("t{}", self.tensors.len());
        self.push(tflite::Tensor {
            shape: Some(shape.to_vec()),
            type_: ty,
            name: Some(name),
            quantization: q.map(|(scale, zero_point)| {
                Box::new(tflite::QuantizationParameters {
                    scale: Some(vec![scale]),
                    zero_point: Some(vec![zero_point]),
                    ..Default::default()
                })
            }),
            ..Default::default()
        })
    }

    /// A float32 activation.
    pub fn f32(&mut self, shape: &[i32]) -> i32 {
        self.tensor(tflite::TensorType::Float32, shape, None)
    }

    /// An int8 activation with scale 0.5 and zero point 0.
    pub fn i8(&mut self, shape: &[i32]) -> i32 {
        self.tensor(tflite::TensorType::Int8, shape, Some((0.5, 0)))
    }

    /// A constant with these bytes.
    pub fn constant(&mut self, ty: tflite::TensorType, shape: &[i32], data: Vec<u8>) -> i32 {
        self.buffers.push(tflite::Buffer {
            data: Some(data),
            ..Default::default()
        });
        let buffer = (self.buffers.len() - 1) as u32;
        let name = format!("c{}", self.tensors.len());
        self.push(tflite::Tensor {
            shape: Some(shape.to_vec()),
            type_: ty,
            buffer,
            name: Some(name),
            ..Default::default()
        })
    }

    /// An int32 constant of shape `shape`.
    pub fn i32s(&mut self, shape: &[i32], values: &[i32]) -> i32 {
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.constant(tflite::TensorType::Int32, shape, data)
    }

    /// A float32 constant of zeros.
    pub fn f32_zeros(&mut self, shape: &[i32]) -> i32 {
        let n: i32 = shape.iter().product();
        self.constant(tflite::TensorType::Float32, shape, vec![0; 4 * n as usize])
    }

    /// An op of `code` with `options`.
    pub fn op(
        &mut self,
        code: tflite::BuiltinOperator,
        options: Option<tflite::BuiltinOptions>,
        inputs: &[i32],
        outputs: &[i32],
    ) {
        let index = match self.codes.iter().position(|c| c.builtin_code == code) {
            Some(i) => i,
            None => {
                self.codes.push(tflite::OperatorCode {
                    deprecated_builtin_code: (code as i32).min(127) as i8,
                    builtin_code: code,
                    version: 1,
                    ..Default::default()
                });
                self.codes.len() - 1
            }
        };
        self.ops.push(tflite::Operator {
            opcode_index: index as u32,
            inputs: Some(inputs.to_vec()),
            outputs: Some(outputs.to_vec()),
            builtin_options: options,
            ..Default::default()
        });
    }

    /// The model, as the schema's owned type.
    pub fn model(self, inputs: &[i32], outputs: &[i32]) -> tflite::Model {
        tflite::Model {
            version: 3,
            operator_codes: Some(self.codes),
            subgraphs: Some(vec![tflite::SubGraph {
                tensors: Some(self.tensors),
                inputs: Some(inputs.to_vec()),
                outputs: Some(outputs.to_vec()),
                operators: Some(self.ops),
                name: Some("main".into()),
                ..Default::default()
            }]),
            buffers: Some(self.buffers),
            ..Default::default()
        }
    }

    /// The model's bytes.
    pub fn build(self, inputs: &[i32], outputs: &[i32]) -> Vec<u8> {
        serialize(&self.model(inputs, outputs))
    }
}

/// Gives tensor `i` a new static shape (and drops its shape signature).
pub fn set_shape(model: &mut tflite::Model, i: usize, shape: &[i32]) {
    let t = tensor(model, i);
    t.shape = Some(shape.to_vec());
    t.shape_signature = None;
}
