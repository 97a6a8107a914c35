//! Real models, corrupted one way at a time: each is refused with the error that names what
//! is wrong and where.

mod common;

use common::{model, op, rewrite, set_shape, subgraph, tensor};
use ember_import::tflite::{self, BuiltinOperator, TensorType};
use ember_import::{Graph, ImportError, OpSite, TensorSite};

/// The error `bytes` are refused with.
fn refused(bytes: &[u8]) -> ImportError {
    match Graph::parse(bytes) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

/// The first refusal in `e`: `e` itself, or the first problem of a report of several.
fn first(e: &ImportError) -> &ImportError {
    match e {
        ImportError::Refused(report) => &report.problems[0],
        e => e,
    }
}

fn op_site(index: usize, name: &str) -> OpSite {
    OpSite {
        index,
        name: name.into(),
    }
}

const HELLO: &str = "tflm/hello_world_int8.tflite";
const PERSON: &str = "tflm/person_detect.tflite";
const KWS: &str = "mlperf_tiny/kws_ref_model.tflite";
const SPEECH: &str = "tflm/micro_speech_quantized.tflite";
const ADD: &str = "tflm/simple_add_model.tflite";

#[test]
fn truncated_files_are_malformed() {
    let Some(models) = common::all_models() else {
        return;
    };
    for (reference, bytes) in &models {
        let full = Graph::parse(bytes).expect("the whole file parses");
        let len = bytes.len();
        // Every length of the small files; for the large ones the ends and 3,000 between.
        let mut lengths: Vec<usize> = if len <= 20_000 {
            (0..len).collect()
        } else {
            let step = len / 3_000;
            (0..64)
                .chain((64..len).step_by(step))
                .chain(len - 64..len)
                .collect()
        };
        lengths.dedup();
        for cut in lengths {
            match Graph::parse(&bytes[..cut]) {
                Err(ImportError::TooShort { len }) => assert!(cut < 8 && len == cut),
                Err(ImportError::Malformed { .. }) => assert!(cut >= 8),
                Err(other) => panic!("{} cut at {cut}: {other}", reference.path),
                // The last bytes of some files are alignment padding nothing refers to.
                Ok(graph) => {
                    assert!(
                        len - cut < 16,
                        "{} cut at {cut} of {len} accepted",
                        reference.path
                    );
                    assert_eq!(graph, full);
                }
            }
        }
    }
}

#[test]
fn wrong_file_identifier() {
    let Some(mut bytes) = model(HELLO) else {
        return;
    };
    bytes[4..8].copy_from_slice(b"TFL2");
    let e = refused(&bytes);
    assert!(matches!(e, ImportError::FileIdentifier { found } if &found == b"TFL2"));
    assert!(e.to_string().contains("\"TFL2\""), "{e}");
    assert!(matches!(refused(b"TFL3"), ImportError::TooShort { len: 4 }));
    assert!(matches!(refused(&[]), ImportError::TooShort { len: 0 }));
}

#[test]
fn corrupt_root_offset() {
    let Some(mut bytes) = model(HELLO) else {
        return;
    };
    bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(refused(&bytes), ImportError::Malformed { .. }));
}

#[test]
fn schema_version() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let bytes = rewrite(&bytes, |m| m.version = 2);
    assert!(matches!(
        refused(&bytes),
        ImportError::SchemaVersion { found: 2 }
    ));
}

#[test]
fn subgraph_count() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let two = rewrite(&bytes, |m| {
        let first = m.subgraphs.as_ref().unwrap()[0].clone();
        m.subgraphs.as_mut().unwrap().push(first);
    });
    assert!(matches!(
        refused(&two),
        ImportError::SubgraphCount { found: 2 }
    ));
    let none = rewrite(&bytes, |m| m.subgraphs = None);
    assert!(matches!(
        refused(&none),
        ImportError::SubgraphCount { found: 0 }
    ));
}

#[test]
fn tensor_index_out_of_range() {
    let Some(bytes) = model(PERSON) else {
        return;
    };
    let far = rewrite(&bytes, |m| op(m, 1).inputs.as_mut().unwrap()[0] = 9_999);
    match refused(&far) {
        ImportError::TensorIndex { at, index, count } => {
            assert_eq!(at, "op 1 (DEPTHWISE_CONV_2D) input 0");
            assert_eq!((index, count), (9_999, 89));
        }
        other => panic!("{other}"),
    }
    let negative = rewrite(&bytes, |m| op(m, 3).outputs.as_mut().unwrap()[0] = -2);
    assert!(matches!(
        refused(&negative),
        ImportError::TensorIndex { ref at, index: -2, .. } if at == "op 3 (DEPTHWISE_CONV_2D) output 0"
    ));
    let output = rewrite(&bytes, |m| subgraph(m).outputs = Some(vec![89]));
    assert!(matches!(
        refused(&output),
        ImportError::TensorIndex { ref at, index: 89, .. } if at == "graph output 0"
    ));
}

#[test]
fn opcode_index_out_of_range() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let bytes = rewrite(&bytes, |m| op(m, 2).opcode_index = 7);
    assert!(matches!(
        refused(&bytes),
        ImportError::OpcodeIndex {
            op: 2,
            index: 7,
            count: 1
        }
    ));
}

#[test]
fn buffer_index_out_of_range() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let bytes = rewrite(&bytes, |m| tensor(m, 6).buffer = 1_000);
    match refused(&bytes) {
        ImportError::BufferIndex { tensor, index, .. } => {
            assert_eq!(tensor.index, 6);
            assert_eq!(index, 1_000);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn buffer_of_the_wrong_size() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    for delta in [-1i64, 1, -15] {
        let edited = rewrite(&bytes, |m| {
            let buffer = tensor(m, 6).buffer as usize;
            let data = m.buffers.as_mut().unwrap()[buffer].data.as_mut().unwrap();
            data.resize((16 + delta) as usize, 0);
        });
        match refused(&edited) {
            ImportError::BufferSize {
                tensor,
                expected,
                found,
                ..
            } => {
                assert_eq!(tensor.index, 6);
                assert_eq!(expected, 16);
                assert_eq!(found as i64, 16 + delta);
            }
            other => panic!("{other}"),
        }
    }
}

#[test]
fn unsupported_operators() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    // Op 0 alone given an operator code of its own.
    let only_op_0 = |code: tflite::OperatorCode| {
        rewrite(&bytes, move |m| {
            let codes = m.operator_codes.as_mut().unwrap();
            codes.push(code);
            op(m, 0).opcode_index = codes.len() as u32 - 1;
        })
    };
    let builtin = |code: BuiltinOperator, deprecated: i8| tflite::OperatorCode {
        builtin_code: code,
        deprecated_builtin_code: deprecated,
        ..Default::default()
    };
    let lsh = only_op_0(builtin(
        BuiltinOperator::LshProjection,
        BuiltinOperator::LshProjection as i32 as i8,
    ));
    let e = refused(&lsh);
    assert!(
        matches!(e, ImportError::UnsupportedOp { ref op } if *op == op_site(0, "LSH_PROJECTION"))
    );
    let text = e.to_string();
    assert!(
        text.starts_with("op 0 (LSH_PROJECTION): unsupported operator"),
        "{text}"
    );
    assert!(
        text.contains("FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D"),
        "{text}"
    );
    assert!(
        text.contains("STRIDED_SLICE, QUANTIZE, DEQUANTIZE"),
        "{text}"
    );

    let custom = only_op_0(tflite::OperatorCode {
        custom_code: Some("MyCustomOp".into()),
        ..builtin(BuiltinOperator::Custom, 32)
    });
    assert!(matches!(
        refused(&custom),
        ImportError::UnsupportedOp { op } if op == op_site(0, "CUSTOM `MyCustomOp`")
    ));
    // The one custom op supported is found by its code, then checked (here: its arity).
    let detection = only_op_0(tflite::OperatorCode {
        custom_code: Some("TFLite_Detection_PostProcess".into()),
        ..builtin(BuiltinOperator::Custom, 32)
    });
    let e = refused(&detection);
    let e = first(&e);
    assert!(matches!(e, ImportError::Arity { .. }), "{e}");
    assert!(
        e.to_string().contains("TFLite_Detection_PostProcess"),
        "{e}"
    );

    // An extended code (past the 127 of the old byte field) is read from `builtin_code`.
    let extended = only_op_0(builtin(BuiltinOperator::DynamicUpdateSlice, 127));
    assert!(matches!(
        refused(&extended),
        ImportError::UnsupportedOp { op } if op == op_site(0, "DYNAMIC_UPDATE_SLICE")
    ));
}

/// A model with several problems is refused once, with all of them: each unsupported
/// operator by name with its ops, the supported operators, and each other refusal.
#[test]
fn every_refusal_in_one_report() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let several = rewrite(&bytes, |m| {
        // Every op of operator code 0 becomes LSH_PROJECTION, then op 1 DYNAMIC_UPDATE_SLICE.
        let codes = m.operator_codes.as_mut().unwrap();
        codes[0].builtin_code = BuiltinOperator::LshProjection;
        codes[0].deprecated_builtin_code = BuiltinOperator::LshProjection as i32 as i8;
        codes.push(tflite::OperatorCode {
            builtin_code: BuiltinOperator::DynamicUpdateSlice,
            deprecated_builtin_code: 127,
            ..Default::default()
        });
        op(m, 1).opcode_index = codes.len() as u32 - 1;
        // And a tensor of a type the importer does not take.
        tensor(m, 7).type_ = TensorType::String;
    });
    let ImportError::Refused(report) = refused(&several) else {
        panic!("one report of every refusal");
    };
    assert_eq!(
        report.unsupported_operators(),
        vec![
            ("LSH_PROJECTION", vec![0, 2]),
            ("DYNAMIC_UPDATE_SLICE", vec![1])
        ]
    );
    assert_eq!(report.problems.len(), 4, "{report}");
    let text = report.to_string();
    for line in [
        "the model asks for 4 things the importer does not take:",
        "- unsupported operators: LSH_PROJECTION at 2 ops: 0, 2; DYNAMIC_UPDATE_SLICE at op 1",
        "  supported: FULLY_CONNECTED, CONV_2D",
        "- tensor 7 `",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(text.contains("unsupported element type string"), "{text}");

    // Supported ops with problems of their own are each named too.
    let two_ops = rewrite(&bytes, |m| {
        tensor(m, 7).type_ = TensorType::Int16;
        tensor(m, 8).type_ = TensorType::Int16;
    });
    let ImportError::Refused(report) = refused(&two_ops) else {
        panic!("one report of every refusal");
    };
    assert!(report.unsupported_operators().is_empty());
    let text = report.to_string();
    assert!(
        text.contains("- op 0 (FULLY_CONNECTED): type mismatch"),
        "{text}"
    );
    assert!(
        text.contains("- op 1 (FULLY_CONNECTED): type mismatch"),
        "{text}"
    );
}

#[test]
fn unsupported_fused_activation() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let bytes = rewrite(&bytes, |m| {
        let Some(tflite::BuiltinOptions::FullyConnectedOptions(o)) =
            op(m, 1).builtin_options.as_mut()
        else {
            panic!("FULLY_CONNECTED options");
        };
        o.fused_activation_function = tflite::ActivationFunctionType::Tanh;
    });
    let e = refused(&bytes);
    match &e {
        ImportError::UnsupportedOption {
            op, option, value, ..
        } => {
            assert_eq!(*op, op_site(1, "FULLY_CONNECTED"));
            assert_eq!(*option, "fused_activation_function");
            assert_eq!(value, "TANH");
        }
        other => panic!("{other}"),
    }
    assert!(
        e.to_string()
            .contains("supported: NONE, RELU, RELU6, RELU_N1_TO_1"),
        "{e}"
    );
}

#[test]
fn options_of_the_wrong_kind_or_value() {
    let Some(bytes) = model(KWS) else {
        return;
    };
    let wrong = rewrite(&bytes, |m| {
        op(m, 0).builtin_options = Some(tflite::BuiltinOptions::SoftmaxOptions(Box::default()));
    });
    assert!(
        matches!(refused(&wrong), ImportError::BadOptions { op, .. } if op == op_site(0, "CONV_2D"))
    );
    let zero_stride = rewrite(&bytes, |m| {
        let Some(tflite::BuiltinOptions::Conv2DOptions(o)) = op(m, 0).builtin_options.as_mut()
        else {
            panic!("CONV_2D options");
        };
        o.stride_h = 0;
    });
    let e = refused(&zero_stride);
    assert!(matches!(e, ImportError::BadOptions { .. }));
    assert!(e.to_string().contains("stride_h is 0"), "{e}");
}

#[test]
fn unsupported_tensor_types_and_features() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let string = rewrite(&bytes, |m| tensor(m, 7).type_ = TensorType::String);
    match refused(&string) {
        ImportError::UnsupportedType { tensor, found } => {
            assert_eq!(tensor.index, 7);
            assert_eq!(found, "string");
        }
        other => panic!("{other}"),
    }
    let variable = rewrite(&bytes, |m| tensor(m, 7).is_variable = true);
    assert!(
        matches!(refused(&variable), ImportError::UnsupportedTensor { tensor, .. } if tensor.index == 7)
    );
    let external = rewrite(&bytes, |m| tensor(m, 6).external_buffer = 1);
    assert!(
        matches!(refused(&external), ImportError::UnsupportedTensor { tensor, .. } if tensor.index == 6)
    );
}

#[test]
fn dynamic_shapes_beyond_the_batch() {
    let Some(bytes) = model(KWS) else {
        return;
    };
    let height = rewrite(&bytes, |m| {
        tensor(m, 0).shape_signature = Some(vec![-1, -1, 10, 1])
    });
    assert!(
        matches!(refused(&height), ImportError::DynamicShape { tensor, .. } if tensor.index == 0)
    );
    let batch_two = rewrite(&bytes, |m| {
        let t = tensor(m, 0);
        t.shape = Some(vec![2, 49, 10, 1]);
        t.shape_signature = Some(vec![-1, 49, 10, 1]);
    });
    assert!(matches!(
        refused(&batch_two),
        ImportError::DynamicShape { .. }
    ));
    let negative = rewrite(&bytes, |m| tensor(m, 0).shape = Some(vec![-1, 49, 10, 1]));
    assert!(matches!(
        refused(&negative),
        ImportError::DynamicShape { .. }
    ));
    let rank = rewrite(&bytes, |m| {
        tensor(m, 0).shape_signature = Some(vec![-1, 49, 10])
    });
    assert!(matches!(refused(&rank), ImportError::Shape { .. }));
    let zero = rewrite(&bytes, |m| tensor(m, 22).shape = Some(vec![1, 0, 5, 64]));
    assert!(
        matches!(refused(&zero), ImportError::UnsupportedTensor { tensor, .. } if tensor.index == 22)
    );
}

#[test]
fn bad_quantization() {
    let Some(bytes) = model(KWS) else {
        return;
    };
    // Conv weights [64, 10, 4, 1] with 64 scales along dimension 0; dimension 1 is 10 long.
    let axis = rewrite(&bytes, |m| {
        tensor(m, 17)
            .quantization
            .as_mut()
            .unwrap()
            .quantized_dimension = 1;
    });
    let e = refused(&axis);
    assert!(
        matches!(e, ImportError::Quantization { ref tensor, .. } if tensor.index == 17),
        "{e}"
    );
    let scale = rewrite(&bytes, |m| {
        tensor(m, 22).quantization.as_mut().unwrap().scale = Some(vec![-1.0]);
    });
    assert!(
        matches!(refused(&scale), ImportError::Quantization { tensor, .. } if tensor.index == 22)
    );
    let zero_point = rewrite(&bytes, |m| {
        tensor(m, 22).quantization.as_mut().unwrap().zero_point = Some(vec![300]);
    });
    assert!(matches!(
        refused(&zero_point),
        ImportError::Quantization { .. }
    ));
    let lengths = rewrite(&bytes, |m| {
        tensor(m, 22).quantization.as_mut().unwrap().zero_point = Some(vec![0, 0]);
    });
    assert!(matches!(
        refused(&lengths),
        ImportError::Quantization { .. }
    ));
    // Activations of a quantized op need per-tensor parameters.
    let missing = rewrite(&bytes, |m| tensor(m, 22).quantization = None);
    assert!(
        matches!(first(&refused(&missing)), ImportError::OpType { op, .. } if *op == op_site(0, "CONV_2D"))
    );
}

#[test]
fn reads_of_tensors_nobody_wrote() {
    let Some(bytes) = model(PERSON) else {
        return;
    };
    // Op 5 reads what op 6 writes.
    let later = rewrite(&bytes, |m| op(m, 5).inputs.as_mut().unwrap()[0] = 62);
    match refused(&later) {
        ImportError::Unwritten { op, tensor } => {
            assert_eq!(op, op_site(5, "DEPTHWISE_CONV_2D"));
            assert_eq!(tensor.index, 62);
            assert_eq!(
                tensor.name,
                "MobilenetV1/MobilenetV1/Conv2d_3_pointwise/Relu6"
            );
        }
        other => panic!("{other}"),
    }
    let no_input = rewrite(&bytes, |m| subgraph(m).inputs = Some(vec![]));
    let e = refused(&no_input);
    assert!(
        matches!(e, ImportError::Unwritten { ref op, ref tensor } if op.index == 0 && tensor.index == 88)
    );
    assert_eq!(
        e.to_string(),
        "op 0 (DEPTHWISE_CONV_2D): reads tensor 88 `input`, which is not a graph input, not a \
         constant, and not written by an earlier op"
    );
}

#[test]
fn tensors_written_twice() {
    let Some(bytes) = model(PERSON) else {
        return;
    };
    let twice = rewrite(&bytes, |m| op(m, 2).outputs.as_mut().unwrap()[0] = 34);
    match refused(&twice) {
        ImportError::WrittenTwice {
            tensor,
            first,
            second,
        } => {
            assert_eq!(tensor.index, 34);
            assert_eq!(first, "by op 0 (DEPTHWISE_CONV_2D)");
            assert_eq!(second, "by op 2 (CONV_2D)");
        }
        other => panic!("{other}"),
    }
    let input = rewrite(&bytes, |m| op(m, 0).outputs.as_mut().unwrap()[0] = 88);
    assert!(matches!(
        refused(&input),
        ImportError::WrittenTwice { first, .. } if first == "as a graph input"
    ));
    let constant = rewrite(&bytes, |m| op(m, 0).outputs.as_mut().unwrap()[0] = 0);
    assert!(matches!(
        refused(&constant),
        ImportError::WrittenTwice { first, .. } if first == "as constant data"
    ));
}

#[test]
fn graph_inputs_and_outputs() {
    let Some(bytes) = model(ADD) else {
        return;
    };
    let unwritten = rewrite(&bytes, |m| {
        let sg = subgraph(m);
        let mut extra = sg.tensors.as_ref().unwrap()[2].clone();
        extra.name = Some("dangling".into());
        sg.tensors.as_mut().unwrap().push(extra);
        sg.outputs = Some(vec![2, 3]);
    });
    assert!(matches!(
        refused(&unwritten),
        ImportError::OutputUnwritten { position: 1, tensor } if tensor == TensorSite { index: 3, name: "dangling".into() }
    ));
    let twice = rewrite(&bytes, |m| subgraph(m).inputs = Some(vec![0, 1, 0]));
    assert!(matches!(
        refused(&twice),
        ImportError::GraphIo {
            which: "input",
            position: 2,
            ..
        }
    ));
}

#[test]
fn shapes_that_disagree() {
    // FULLY_CONNECTED: output [1, 16] made [1, 15].
    if let Some(bytes) = model(HELLO) {
        let fc = rewrite(&bytes, |m| set_shape(m, 7, &[1, 15]));
        let e = refused(&fc);
        assert!(
            matches!(first(&e), ImportError::OpShape { op, .. } if *op == op_site(0, "FULLY_CONNECTED")),
            "{e}"
        );
    }
    // CONV_2D: two input channels against OHWI weights of one.
    if let Some(bytes) = model(KWS) {
        let conv = rewrite(&bytes, |m| set_shape(m, 0, &[1, 49, 10, 2]));
        let e = refused(&conv);
        assert!(
            matches!(e, ImportError::OpShape { ref op, .. } if *op == op_site(0, "CONV_2D")),
            "{e}"
        );
        assert!(
            e.to_string().contains("has 1 input channels but input 0"),
            "{e}"
        );
        // AVERAGE_POOL_2D: a 25x5 window over 25x5 gives 1x1, not 2x1.
        let pool = rewrite(&bytes, |m| set_shape(m, 31, &[1, 2, 1, 64]));
        assert!(
            matches!(first(&refused(&pool)), ImportError::OpShape { op, .. } if *op == op_site(9, "AVERAGE_POOL_2D"))
        );
        // SOFTMAX: output unlike its input.
        let softmax = rewrite(&bytes, |m| set_shape(m, 34, &[1, 13]));
        assert!(
            matches!(first(&refused(&softmax)), ImportError::OpShape { op, .. } if *op == op_site(12, "SOFTMAX"))
        );
    }
    // DEPTHWISE_CONV_2D: 8 weight channels are no multiple of 3 input channels.
    if let Some(bytes) = model(PERSON) {
        let dw = rewrite(&bytes, |m| set_shape(m, 88, &[1, 96, 96, 3]));
        let e = refused(&dw);
        assert!(
            matches!(e, ImportError::OpShape { ref op, .. } if *op == op_site(0, "DEPTHWISE_CONV_2D")),
            "{e}"
        );
        assert!(e.to_string().contains("not a multiple"), "{e}");
    }
    // RESHAPE: 1960 elements into 3920.
    if let Some(bytes) = model(SPEECH) {
        let reshape = rewrite(&bytes, |m| set_shape(m, 4, &[1, 49, 40, 2]));
        assert!(
            matches!(first(&refused(&reshape)), ImportError::OpShape { op, .. } if *op == op_site(0, "RESHAPE"))
        );
        // The shape input no longer gives the output's shape.
        let new_shape = rewrite(&bytes, |m| {
            let buffer = tensor(m, 5).buffer as usize;
            let data = m.buffers.as_mut().unwrap()[buffer].data.as_mut().unwrap();
            data[4..8].copy_from_slice(&40i32.to_le_bytes());
            data[8..12].copy_from_slice(&49i32.to_le_bytes());
        });
        assert!(
            matches!(first(&refused(&new_shape)), ImportError::OpShape { op, .. } if *op == op_site(0, "RESHAPE"))
        );
    }
    // ADD: 128 and 64 do not broadcast.
    if let Some(bytes) = model(ADD) {
        let add = rewrite(&bytes, |m| set_shape(m, 1, &[1, 64, 128, 1]));
        let e = refused(&add);
        assert!(
            matches!(e, ImportError::OpShape { ref op, .. } if *op == op_site(0, "ADD")),
            "{e}"
        );
        assert!(e.to_string().contains("do not broadcast"), "{e}");
        // but 1 broadcasts.
        let one = rewrite(&bytes, |m| set_shape(m, 1, &[1, 1, 128, 1]));
        Graph::parse(&one).expect("[1, 1, 128, 1] broadcasts to [1, 128, 128, 1]");
    }
}

#[test]
fn types_that_disagree() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let output = rewrite(&bytes, |m| tensor(m, 7).type_ = TensorType::Int16);
    let e = refused(&output);
    assert!(
        matches!(first(&e), ImportError::OpType { op, .. } if *op == op_site(0, "FULLY_CONNECTED")),
        "{e}"
    );
    let float_input = rewrite(&bytes, |m| tensor(m, 0).type_ = TensorType::Float32);
    assert!(matches!(
        first(&refused(&float_input)),
        ImportError::OpType { .. }
    ));
    // Float activations over int8 weights: a hybrid model, refused as TFLM refuses it, in
    // one line that says so.
    let hybrid = rewrite(&bytes, |m| {
        for id in [0, 7] {
            tensor(m, id).type_ = TensorType::Float32;
            tensor(m, id).quantization = None;
        }
    });
    let text = first(&refused(&hybrid)).to_string();
    assert!(
        text.contains("a hybrid op (float32 activations, 8-bit weights)")
            && text.contains("Hybrid models are not supported on TFLite Micro.")
            && !text.contains('\n'),
        "{text}"
    );
}

#[test]
fn errors_name_what_and_where() {
    let Some(bytes) = model(HELLO) else {
        return;
    };
    let bytes = rewrite(&bytes, |m| {
        let buffer = tensor(m, 6).buffer as usize;
        m.buffers.as_mut().unwrap()[buffer]
            .data
            .as_mut()
            .unwrap()
            .pop();
    });
    let text = refused(&bytes).to_string();
    assert!(text.starts_with("tensor 6 `"), "{text}");
    assert!(
        text.contains("holds 15 bytes; [16, 1] × int8 needs 16"),
        "{text}"
    );
}
