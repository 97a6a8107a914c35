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
