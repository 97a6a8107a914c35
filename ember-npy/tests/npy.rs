//! The reader and writer against files numpy wrote, and malformed files (errors, never
//! panics); the oracle's manifest; the generator against values the oracle's Python drew.

use ember_npy::oracle::{random_input, Manifest};
use ember_npy::{Array, DType, Data, Error};

/// Files `np.save` (numpy 2.4.6) wrote, with the arrays they hold.
fn numpy_files() -> Vec<(&'static [u8], Array)> {
    let a = |shape: Vec<usize>, data| Array::new(shape, data).unwrap();
    vec![
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '|i1', 'fortran_order': False, 'shape': (1, 3), }                                                          \n\x01\xfe\x03",
            a(vec![1, 3], Data::I8(vec![1, -2, 3])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }                                                            \n\x00\x00\xc0?\x00\x00\x00\xc0",
            a(vec![2], Data::F32(vec![1.5, -2.0])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': False, 'shape': (), }                                                              \n\x07\x00\x00\x00",
            a(vec![], Data::I32(vec![7])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '<i2', 'fortran_order': False, 'shape': (2, 0, 3), }                                                       \n",
            a(vec![2, 0, 3], Data::I16(vec![])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }                                                            \n\xff\x00",
            a(vec![2], Data::U8(vec![255, 0])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }                                                            \n\x01\x00",
            a(vec![2], Data::Bool(vec![true, false])),
        ),
        (
            // 18 dimensions: numpy's room for the first dimension to grow takes the header
            // past 128 bytes.
            b"\x93NUMPY\x01\x00\xb6\x00{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }                                                                          \n\xfb",
            a(vec![1; 18], Data::I8(vec![-5])),
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '|i1', 'fortran_order': False, 'shape': (123456789, 0), }                                                  \n",
            a(vec![123_456_789, 0], Data::I8(vec![])),
        ),
    ]
}

#[test]
fn reads_and_writes_what_numpy_does() {
    for (bytes, array) in numpy_files() {
        assert_eq!(Array::parse(bytes).unwrap(), array);
        assert_eq!(array.to_npy(), bytes, "{array:?}");
    }
}

#[test]
fn reads_versions_2_and_3() {
    let v2 = b"\x93NUMPY\x02\x00t\x00\x00\x00{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }                                                          \n\x01\x00\x02\x00";
    let v3 = b"\x93NUMPY\x03\x00t\x00\x00\x00{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }                                                          \n\x01\x00\x02\x00";
    for bytes in [&v2[..], &v3[..]] {
        let a = Array::parse(bytes).unwrap();
        assert_eq!(a.as_i16(), Some(&[1i16, 2][..]));
        assert_eq!(a.shape(), &[2]);
    }
}

#[test]
fn round_trips_every_type_and_file() {
    let dir = std::env::temp_dir().join(format!("ember-npy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arrays = [
        Array::new(vec![2, 2], Data::I8(vec![-128, 0, 1, 127])).unwrap(),
        Array::new(vec![3], Data::U8(vec![0, 128, 255])).unwrap(),
        Array::new(vec![1, 2], Data::I16(vec![i16::MIN, i16::MAX])).unwrap(),
        Array::new(vec![2, 1, 1], Data::I32(vec![i32::MIN, -1])).unwrap(),
        Array::new(vec![4], Data::F32(vec![0.0, -0.0, f32::INFINITY, 1e-45])).unwrap(),
    ];
    for (k, a) in arrays.iter().enumerate() {
        let path = dir.join(format!("{k}.npy"));
        ember_npy::write(&path, a).unwrap();
        let back = ember_npy::read(&path).unwrap();
        assert_eq!(&back, a);
        assert_eq!(back.data().to_le_bytes(), a.data().to_le_bytes());
    }
    // A header too long for version 1.0 is written as version 2.0.
    let long = Array::new(vec![1; 30_000], Data::U8(vec![9])).unwrap();
    let bytes = long.to_npy();
    assert_eq!(&bytes[6..8], &[2, 0]);
    assert_eq!((bytes.len() - 1) % 64, 0);
    assert_eq!(Array::parse(&bytes).unwrap(), long);
    assert!(matches!(
        ember_npy::read(dir.join("absent.npy")),
        Err(Error::Io(..))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shape_and_length_must_agree() {
    assert!(matches!(
        Array::new(vec![2, 2], Data::I8(vec![1, 2, 3])),
        Err(Error::Shape { .. })
    ));
    assert!(Array::new(vec![usize::MAX, 2], Data::I8(vec![])).is_err());
    assert!(Data::from_le_bytes(DType::I32, &[1, 2, 3]).is_none());
}

/// A version-1.0 file with `header` (padded to 64) and `data`.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn malformed_files_are_errors() {
    let ok = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
    assert!(Array::parse(&file(ok, &[1, 0, 2, 0])).is_ok());
    let header = |h: &str| file(h, &[1, 0, 2, 0]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("bad magic", b"\x93NUMPZ\x01\x00\x00\x00".to_vec()),
        ("magic only", b"\x93NUMPY".to_vec()),
        ("no header length", b"\x93NUMPY\x01\x00\x05".to_vec()),
        ("version 4.0", b"\x93NUMPY\x04\x00\x00\x00".to_vec()),
        ("version 1.1", b"\x93NUMPY\x01\x01\x00\x00".to_vec()),
        (
            "header past the end",
            b"\x93NUMPY\x01\x00\xff\x00{}".to_vec(),
        ),
        (
            "v2 header past the end",
            b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}".to_vec(),
        ),
        ("not a dict", header("['descr', '<i2']")),
        ("empty dict", header("{}")),
        (
            "no shape",
            header("{'descr': '<i2', 'fortran_order': False}"),
        ),
        (
            "unknown key",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
        ),
        (
            "key twice",
            header("{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "unquoted key",
            header("{descr: '<i2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "unterminated string",
            header("{'descr: '<i2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "no colon",
            header("{'descr' '<i2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "no comma",
            header("{'descr': '<i2' 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "no closing brace",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (2,)"),
        ),
        (
            "text after brace",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (2,)} x"),
        ),
        (
            "fortran_order 0",
            header("{'descr': '<i2', 'fortran_order': 0, 'shape': (2,)}"),
        ),
        (
            "fortran order",
            header("{'descr': '<i2', 'fortran_order': True, 'shape': (2,)}"),
        ),
        (
            "big-endian",
            header("{'descr': '>i2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "int64",
            header("{'descr': '<i8', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "float64",
            header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "object",
            header("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "structured",
            header("{'descr': [('a', '<i2')], 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "escaped string",
            header("{'descr': '<i\\2', 'fortran_order': False, 'shape': (2,)}"),
        ),
        (
            "negative dimension",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (-2,)}"),
        ),
        (
            "(n) is no tuple",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (2)}"),
        ),
        (
            "list shape",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': [2]}"),
        ),
        (
            "float dimension",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (2.0,)}"),
        ),
        (
            "empty dimension",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (, 2)}"),
        ),
        (
            "two commas",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (1,, 2)}"),
        ),
        (
            "no comma between",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (1 2)}"),
        ),
        (
            "huge dimension",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (99999999999999999999999,)}"),
        ),
        (
            "shape overflows",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
        ),
        (
            "data too short",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (3,)}"),
        ),
        (
            "data too long",
            header("{'descr': '<i2', 'fortran_order': False, 'shape': (1,)}"),
        ),
        ("half an element", file(ok, &[1, 0, 2])),
        ("non-UTF-8 v3 header", {
            let mut f = file(ok, &[1, 0, 2, 0]);
            f[6] = 3;
            f.splice(8..10, [f[8], f[9], 0, 0]);
            f[12] = 0xff;
            f
        }),
    ];
    for (what, bytes) in cases {
        match Array::parse(&bytes) {
            Ok(a) => panic!("{what}: accepted as {a:?}"),
            Err(e) => assert!(!e.to_string().is_empty(), "{what}"),
        }
    }
}

#[test]
fn truncated_and_flipped_files_never_panic() {
    for (bytes, _) in numpy_files() {
        for len in 0..bytes.len() {
            let _ = Array::parse(&bytes[..len]);
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.to_vec();
                b[i] ^= 1 << bit;
                let _ = Array::parse(&b);
            }
        }
    }
}

#[test]
fn refusals_keep_their_error_variants() {
    let ok = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
    let parse = |bytes: &[u8]| Array::parse(bytes).unwrap_err();
    assert!(matches!(parse(b"\x93NUMPZ\x01\x00\x00\x00"), Error::Magic));
    assert!(matches!(
        parse(b"\x93NUMPY\x04\x00\x00\x00"),
        Error::Version(4, 0)
    ));
    assert!(matches!(
        parse(b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}"),
        Error::Truncated
    ));
    let header = |h: &str| parse(&file(h, &[1, 0, 2, 0]));
    for h in [
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'x': 1}",
        "{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<i2', 'fortran_order': False, 'shape': [2]}",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2,)} x",
    ] {
        assert!(matches!(header(h), Error::Header(_)), "{h}");
    }
    assert!(matches!(
        header("{'descr': '<i2', 'fortran_order': True, 'shape': (2,)}"),
        Error::FortranOrder
    ));
    assert!(matches!(
        header("{'descr': '>i2', 'fortran_order': False, 'shape': (2,)}"),
        Error::Dtype(d) if d == ">i2"
    ));
    assert!(matches!(
        parse(&file(ok, &[1, 0, 2, 0, 3])),
        Error::Size {
            expected: Some(4),
            actual: 5
        }
    ));
    assert!(matches!(
        header("{'descr': '<i2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
        Error::Size {
            expected: None,
            actual: 4
        }
    ));
}

#[test]
fn reads_python_2_longs_and_every_one_byte_spelling() {
    let a = Array::parse(&file(
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2L,), }",
        &[1, 0, 2, 0],
    ))
    .unwrap();
    assert_eq!(a.as_i16(), Some(&[1i16, 2][..]));
    let one_byte = |descr: &str| {
        let h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
        Array::parse(&file(&h, &[0xff, 1])).map(|a| a.dtype())
    };
    for descr in ["|i1", "<i1", "=i1", "i1", "|b", "b"] {
        assert_eq!(one_byte(descr).unwrap(), DType::I8, "{descr}");
    }
    for descr in ["|u1", "<u1", "=u1", "u1", "|B", "B"] {
        assert_eq!(one_byte(descr).unwrap(), DType::U8, "{descr}");
    }
    for descr in ["|b1", "<b1", "=b1", "b1", "|?", "?"] {
        assert_eq!(one_byte(descr).unwrap(), DType::Bool, "{descr}");
    }
    for descr in [
        ">i1", ">b1", "<i2L", "<i02", "|i2", "<u2", "<f2", "<M8[ns]", "",
    ] {
        assert!(matches!(one_byte(descr), Err(Error::Dtype(_))), "{descr}");
    }
    // A zero dimension makes an empty array however large the others are.
    let empty = "{'descr': '<i2', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }";
    assert_eq!(
        Array::parse(&file(empty, &[])).unwrap().shape(),
        &[0, 1 << 32, 1 << 32]
    );
}

#[test]
fn deep_nesting_is_refused_at_once() {
    // A header nested deep is refused, and at once (a backtracking parser could take
    // minutes on these).
    let start = std::time::Instant::now();
    for (open, close) in [("{", "}"), ("[", "]"), ("(", ",)"), ("{1: ", "}")] {
        let descr = format!("{}1{}", open.repeat(40), close.repeat(40));
        let h = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (2,)}}");
        assert!(matches!(
            Array::parse(&file(&h, &[1, 0, 2, 0])),
            Err(Error::Header(_))
        ));
        // Brackets inside strings count too, so quotes can't hide nesting.
        let h = format!("{{'descr': ('))', {descr}), 'fortran_order': False, 'shape': (2,)}}");
        assert!(matches!(
            Array::parse(&file(&h, &[1, 0, 2, 0])),
            Err(Error::Header(_))
        ));
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn generator_matches_the_oracle_script() {
    // Values `random_input` in xtask/oracle/tflm_oracle.py drew (seed 3, input 1, 8 elements).
    let r = |dtype| random_input(3, 1, dtype, &[8], (-1.0, 1.0)).unwrap();
    assert_eq!(
        r(DType::I8).as_i8().unwrap(),
        &[-127, 13, -83, -115, -11, 9, 15, -65]
    );
    assert_eq!(
        r(DType::U8).as_u8().unwrap(),
        &[129, 13, 173, 141, 245, 9, 15, 191]
    );
    assert_eq!(
        r(DType::I16).as_i16().unwrap(),
        &[-32505, 3431, -21014, -29398, -2688, 2477, 4041, -16390]
    );
    assert_eq!(
        r(DType::I32).as_i32().unwrap(),
        &[
            -2130203685,
            224893243,
            -1377146214,
            -1926621447,
            -176117414,
            162368827,
            264872858,
            -1074128182
        ]
    );
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // 0x1.07abp-7, -0x1.ca619cp-1, 0x1.6f535p-2, 0x1.a542cp-4, 0x1.d602a4p-1, -0x1.d949ccp-1,
    // -0x1.c0d974p-1, 0x1.ffd0d0p-2
    let expected: [f32; 8] = [
        0.008046508,
        -0.89527595,
        0.35871625,
        0.10284686,
        0.9179889,
        -0.92439115,
        -0.87665904,
        0.49982,
    ];
    assert_eq!(bits(r(DType::F32).as_f32().unwrap()), bits(&expected));
    // Another range: seed 5, input 0, [-3.5, 10).
    let f = random_input(5, 0, DType::F32, &[4], (-3.5, 10.0)).unwrap();
    let expected: [f32; 4] = [6.107936, 1.8438414, 5.4264283, -2.081539];
    assert_eq!(bits(f.as_f32().unwrap()), bits(&expected));
}

const MANIFEST: &str = r#"{
  "format": "ember-tflm-oracle/1",
  "oracle": {"tflite_micro": "0.dev20261023182759", "numpy": "2.4.6", "python": "3.11.7"},
  "model": "/m/x.tflite", "model_sha256": "ab", "model_bytes": 10, "arena_size": 16777216,
  "arena": {"lines": ["a"], "total": 1504, "head": 32, "tail": 1472},
  "generator": "splitmix64", "float_range": [-1.0, 1.0],
  "inputs": [{"index": 0, "tensor": 1, "name": "in", "dtype": "int8", "shape": [1, 1],
              "shape_signature": [-1, 1], "scale": [0.024480115622282028], "zero_point": [-128],
              "quantized_dimension": 0}],
  "outputs": [{"index": 0, "tensor": 9, "name": "out", "dtype": "float32", "shape": [1, 2],
               "shape_signature": null, "scale": [], "zero_point": [], "quantized_dimension": 0}],
  "cases": [{"name": "zeros", "kind": "zeros", "inputs": ["zeros.in0.npy"], "outputs": ["zeros.out0.npy"]},
            {"name": "seed7", "kind": "random", "seed": 7, "inputs": ["seed7.in0.npy"], "outputs": ["seed7.out0.npy"]}]
}"#;

#[test]
fn manifest_parses_and_reads_its_files() {
    let dir = std::env::temp_dir().join(format!("ember-npy-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), MANIFEST).unwrap();
    let m = Manifest::load(&dir).unwrap();
    assert_eq!(m.arena.total, Some(1504));
    assert_eq!(m.inputs[0].scale, vec![0.024480116f32]);
    assert_eq!(m.inputs[0].zero_point, vec![-128]);
    assert_eq!(m.outputs[0].dtype, DType::F32);
    let seed7 = m.case("seed7").unwrap();
    assert_eq!(seed7.seed, Some(7));
    let input = random_input(7, 0, DType::I8, &[1, 1], m.float_range).unwrap();
    ember_npy::write(dir.join("seed7.in0.npy"), &input).unwrap();
    assert_eq!(m.read_inputs(seed7).unwrap(), vec![input]);
    // A file whose shape is not the tensor's is refused.
    let wrong = Array::new(vec![2], Data::F32(vec![0.0, 1.0])).unwrap();
    ember_npy::write(dir.join("seed7.out0.npy"), &wrong).unwrap();
    assert!(matches!(m.read_outputs(seed7), Err(Error::Manifest(_))));
    assert!(m.read_outputs(m.case("zeros").unwrap()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run of LiteRT's reference kernels (the oracle of the ops TFLM lacks) names its
/// interpreter and reports no arena; one that names none is TFLM's.
#[test]
fn manifest_names_its_interpreter() {
    let dir = std::path::PathBuf::new();
    assert_eq!(
        Manifest::parse(MANIFEST, dir.clone()).unwrap().interpreter,
        "tflm"
    );
    let litert = MANIFEST
        .replacen(
            "\"oracle\": {",
            "\"oracle\": {\"interpreter\": \"litert-builtin-ref\", \"ai_edge_litert\": \"2.3.0\", ",
            1,
        )
        .replacen(
            "{\"lines\": [\"a\"], \"total\": 1504, \"head\": 32, \"tail\": 1472}",
            "{\"lines\": [], \"total\": null, \"head\": null, \"tail\": null}",
            1,
        );
    let m = Manifest::parse(&litert, dir.clone()).unwrap();
    assert_eq!(m.interpreter, "litert-builtin-ref");
    assert_eq!(
        (m.arena.total, m.arena.head, m.arena.tail),
        (None, None, None)
    );
    let bad = MANIFEST.replacen("\"oracle\": {", "\"oracle\": {\"interpreter\": 3, ", 1);
    assert!(Manifest::parse(&bad, dir).is_err());
}

#[test]
fn malformed_manifests_are_errors() {
    let dir = std::path::PathBuf::new();
    assert!(Manifest::parse(MANIFEST, dir.clone()).is_ok());
    let edits: &[(&str, &str)] = &[
        ("\"ember-tflm-oracle/1\"", "\"other/1\""),
        ("\"dtype\": \"int8\"", "\"dtype\": \"int64\""),
        ("\"shape\": [1, 1]", "\"shape\": [1, -1]"),
        ("\"zero_point\": [-128]", "\"zero_point\": []"),
        ("\"index\": 0, \"tensor\": 1", "\"index\": 1, \"tensor\": 1"),
        ("[\"zeros.in0.npy\"]", "[\"../zeros.in0.npy\"]"),
        ("[\"zeros.in0.npy\"]", "[]"),
        ("\"seed\": 7", "\"seed\": 4294967296"),
        ("\"float_range\": [-1.0, 1.0]", "\"float_range\": [-1.0]"),
        ("\"arena_size\": 16777216", "\"arena_size\": -1"),
        ("{\"lines\": [\"a\"]", "{\"lines\": [1]"),
        ("\"model\": \"/m/x.tflite\",", ""),
        ("}]\n}", "}]\n"),
    ];
    for (from, to) in edits {
        assert!(MANIFEST.contains(from), "{from}");
        let text = MANIFEST.replacen(from, to, 1);
        assert!(
            Manifest::parse(&text, dir.clone()).is_err(),
            "accepted with {from} → {to}"
        );
    }
}
