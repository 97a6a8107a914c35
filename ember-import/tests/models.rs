//! Every reference model parses into the expected ops, tensors and quirks, and its memory
//! plan fits in no more than TFLM's activation arena.

mod common;

use ember_import::{
    ElementType, Graph, OpKind, Padding, Quantization, TensorId, DEFAULT_ALIGNMENT,
};

/// `n` copies of `ops`.
fn times(ops: &[&'static str], n: usize) -> Vec<&'static str> {
    ops.iter().copied().cycle().take(ops.len() * n).collect()
}

/// The expected ops of each reference model, in order.
fn expected_ops(path: &str) -> Vec<&'static str> {
    const FC: &str = "FULLY_CONNECTED";
    const CONV: &str = "CONV_2D";
    const DW: &str = "DEPTHWISE_CONV_2D";
    match path {
        "tflm/hello_world_int8.tflite"
        | "tflm/hello_world_float.tflite"
        | "microflow/sine.tflite" => times(&[FC], 3),
        "tflm/micro_speech_quantized.tflite" => vec!["RESHAPE", DW, FC, "SOFTMAX"],
        "tflm/person_detect.tflite" => [vec![DW], times(&[DW, CONV], 13)]
            .concat()
            .into_iter()
            .chain(["AVERAGE_POOL_2D", CONV, "RESHAPE", "SOFTMAX"])
            .collect(),
        "tflm/magic_wand.tflite" => {
            vec![DW, "MAX_POOL_2D", CONV, "MAX_POOL_2D", FC, FC, "SOFTMAX"]
        }
        "tflm/simple_add_model.tflite" => vec!["ADD"],
        "mlperf_tiny/kws_ref_model.tflite" => [vec![CONV], times(&[DW, CONV], 4)]
            .concat()
            .into_iter()
            .chain(["AVERAGE_POOL_2D", "RESHAPE", FC, "SOFTMAX"])
            .collect(),
        "mlperf_tiny/pretrainedResnet_quant.tflite" => [
            CONV,
            CONV,
            CONV,
            "ADD",
            CONV,
            CONV,
            CONV,
            "ADD",
            CONV,
            CONV,
            CONV,
            "ADD",
            "AVERAGE_POOL_2D",
            "RESHAPE",
            FC,
            "SOFTMAX",
        ]
        .to_vec(),
        "mlperf_tiny/ad01_int8.tflite" => times(&[FC], 10),
        other => panic!("no expectation for {other}"),
    }
}

/// `(type, shape)` of each graph input and output.
type Io = Vec<(ElementType, Vec<usize>)>;

fn expected_io(path: &str) -> (Io, Io) {
    use ElementType::{Float32, Int8};
    match path {
        "tflm/hello_world_int8.tflite" | "microflow/sine.tflite" => {
            (vec![(Int8, vec![1, 1])], vec![(Int8, vec![1, 1])])
        }
        "tflm/hello_world_float.tflite" => {
            (vec![(Float32, vec![1, 1])], vec![(Float32, vec![1, 1])])
        }
        "tflm/micro_speech_quantized.tflite" => {
            (vec![(Int8, vec![1, 1960])], vec![(Int8, vec![1, 4])])
        }
        "tflm/person_detect.tflite" => (vec![(Int8, vec![1, 96, 96, 1])], vec![(Int8, vec![1, 2])]),
        "tflm/magic_wand.tflite" => (
            vec![(Float32, vec![1, 128, 3, 1])],
            vec![(Float32, vec![1, 4])],
        ),
        "tflm/simple_add_model.tflite" => (
            vec![(Int8, vec![1, 128, 128, 1]), (Int8, vec![1, 128, 128, 1])],
            vec![(Int8, vec![1, 128, 128, 1])],
        ),
        "mlperf_tiny/kws_ref_model.tflite" => {
            (vec![(Int8, vec![1, 49, 10, 1])], vec![(Int8, vec![1, 12])])
        }
        "mlperf_tiny/pretrainedResnet_quant.tflite" => {
            (vec![(Int8, vec![1, 32, 32, 3])], vec![(Int8, vec![1, 10])])
        }
        "mlperf_tiny/ad01_int8.tflite" => (vec![(Int8, vec![1, 640])], vec![(Int8, vec![1, 640])]),
        other => panic!("no expectation for {other}"),
    }
}

fn io(graph: &Graph<'_>, ids: &[TensorId]) -> Io {
    ids.iter()
        .map(|&id| {
            let t = graph.tensor(id);
            (t.element_type, t.shape.clone())
        })
        .collect()
}

#[test]
fn every_reference_model_parses_with_its_ops_and_io() {
    let Some(models) = common::all_models() else {
        return;
    };
    for (reference, bytes) in &models {
        let graph = Graph::parse(bytes).unwrap_or_else(|e| panic!("{}: {e}", reference.path));
        let ops: Vec<&str> = graph.ops().iter().map(|op| op.kind.name()).collect();
        assert_eq!(ops, expected_ops(reference.path), "{}", reference.path);
        let (inputs, outputs) = expected_io(reference.path);
        assert_eq!(io(&graph, graph.inputs()), inputs, "{}", reference.path);
        assert_eq!(io(&graph, graph.outputs()), outputs, "{}", reference.path);
        for (i, op) in graph.ops().iter().enumerate() {
            assert_eq!(op.index, i);
            assert_eq!(op.outputs.len(), 1);
        }
        // Constants hold exactly their shape's bytes.
        for t in graph.tensors() {
            if let Some(data) = t.data {
                assert_eq!(data.len(), t.byte_size(), "{} {}", reference.path, t.name);
            }
        }
        assert!(graph.constant_bytes() > 0 || reference.path.contains("simple_add"));
    }
}

#[test]
fn person_detect_options_and_per_channel_quirk() {
    let Some(bytes) = common::model("tflm/person_detect.tflite") else {
        return;
    };
    let graph = Graph::parse(&bytes).expect("person_detect parses");
    // Op 0: depthwise 3x3 stride 2 with a multiplier of 8 over the 1-channel input.
    match &graph.ops()[0].kind {
        OpKind::DepthwiseConv2d(o) => {
            assert_eq!(o.depth_multiplier, 8);
            assert_eq!((o.stride.h, o.stride.w), (2, 2));
            assert_eq!(o.padding, Padding::Same);
        }
        other => panic!("op 0 is {other:?}"),
    }
    // The 14 rank-1 bias tensors say quantized_dimension 3 (out of range); they are read as
    // per-channel along their one dimension, as TFLM does.
    let mut biases = 0;
    for op in graph.ops() {
        if let OpKind::Conv2d(_) | OpKind::DepthwiseConv2d(_) = op.kind {
            let bias = graph.tensor(op.inputs[2].expect("a bias"));
            assert_eq!(bias.element_type, ElementType::Int32);
            match &bias.quantization {
                Some(Quantization::PerChannel { axis, scales, .. }) => {
                    assert_eq!(*axis, 0);
                    assert_eq!(scales.len(), bias.shape[0]);
                    biases += 1;
                }
                Some(Quantization::PerTensor { .. }) => {}
                None => panic!("bias of op {} unquantized", op.index),
            }
            let weights = graph.tensor(op.inputs[1].expect("weights"));
            let axis = if matches!(op.kind, OpKind::Conv2d(_)) {
                0
            } else {
                3
            };
            if let Some(Quantization::PerChannel { axis: a, .. }) = &weights.quantization {
                assert_eq!(*a, axis);
            }
        }
    }
    assert!(biases >= 14, "{biases} per-channel biases");
}

#[test]
fn dynamic_batch_is_pinned_to_one() {
    let Some(models) = common::all_models() else {
        return;
    };
    let mut dynamic = 0;
    for (reference, bytes) in &models {
        let graph = Graph::parse(bytes).expect("parses");
        for t in graph.tensors().iter().filter(|t| t.dynamic_batch) {
            assert_eq!(t.shape.first(), Some(&1), "{} {}", reference.path, t.name);
            dynamic += 1;
        }
    }
    assert!(
        dynamic > 0,
        "no reference model declares a dynamic batch any more"
    );
}

#[test]
fn arena_fits_in_tflm_head() {
    let Some(models) = common::all_models() else {
        return;
    };
    let mut over = Vec::new();
    eprintln!(
        "{:<44} {:>10} {:>12} {:>12}",
        "model", "ours", "TFLM head", "no reuse"
    );
    for (reference, bytes) in &models {
        let graph = Graph::parse(bytes).expect("parses");
        let plan = graph.plan(DEFAULT_ALIGNMENT).expect("plans");
        common::check_plan(&graph, &plan);
        let head = reference
            .tflm_head
            .map_or_else(|| "-".to_string(), |h| h.to_string());
        eprintln!(
            "{:<44} {:>10} {:>12} {:>12}",
            reference.path,
            plan.arena_size(),
            head,
            plan.unshared_size()
        );
        if let Some(head) = reference.tflm_head {
            if plan.arena_size() > head {
                over.push((reference.path, plan.arena_size(), head));
            }
        }
    }
    assert!(over.is_empty(), "arenas larger than TFLM's: {over:?}");
}

#[test]
fn plans_hold_at_other_alignments() {
    let Some(models) = common::all_models() else {
        return;
    };
    for (_, bytes) in &models {
        let graph = Graph::parse(bytes).expect("parses");
        let mut last = 0;
        for alignment in [1, 4, 16, 64, 4096] {
            let plan = graph.plan(alignment).expect("plans");
            common::check_plan(&graph, &plan);
            assert!(plan.arena_size() <= plan.unshared_size());
            last = last.max(plan.arena_size());
        }
        assert!(last > 0);
        assert_eq!(graph.plan(3), Err(ember_import::PlanError::Alignment(3)));
        assert_eq!(graph.plan(0), Err(ember_import::PlanError::Alignment(0)));
    }
}

#[test]
fn reshape_views_share_storage() {
    let Some(bytes) = common::model("tflm/micro_speech_quantized.tflite") else {
        return;
    };
    let graph = Graph::parse(&bytes).expect("parses");
    let plan = graph.plan(DEFAULT_ALIGNMENT).expect("plans");
    let reshape = &graph.ops()[0];
    assert_eq!(reshape.kind, OpKind::Reshape);
    let input = plan.placement(reshape.inputs[0].unwrap()).unwrap();
    let output = plan.placement(reshape.outputs[0]).unwrap();
    assert_eq!(
        input, output,
        "RESHAPE of a graph input into an activation is a view"
    );
}
