//! The TFLM oracle's output: `manifest.json` and its `.npy` files, as
//! `xtask/oracle/tflm_oracle.py` (run by `cargo xtask oracle MODEL`) writes them, and its
//! random inputs, reproduced bit for bit.
//!
//! ```no_run
//! use ember_npy::oracle::Manifest;
//! let m = Manifest::load("target/oracle/person_detect").unwrap();
//! let case = m.case("bmp-person").unwrap();
//! let (inputs, expected) = (m.read_inputs(case).unwrap(), m.read_outputs(case).unwrap());
//! # let _ = (inputs, expected);
//! ```

use crate::{Array, DType, Data, Error};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A model input or output as the model file declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Position in the subgraph's input (or output) list: TFLM's `set_input`/`get_output`
    /// index.
    pub index: usize,
    /// The tensor's number in the subgraph.
    pub tensor: usize,
    /// The tensor's name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// `shape` (not `shape_signature`, whose batch may be -1).
    pub shape: Vec<usize>,
    /// Quantization scales (empty when not quantized; one when per-tensor).
    pub scale: Vec<f32>,
    /// Quantization zero points, one per scale.
    pub zero_point: Vec<i64>,
    /// The quantized dimension (meaningful with more than one scale).
    pub quantized_dimension: usize,
}

/// TFLM's arena use after the first invoke, from `print_allocations`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Arena {
    /// Bytes in all (head + tail).
    pub total: Option<u64>,
    /// Activations (the arena's head).
    pub head: Option<u64>,
    /// Persistent allocations (the arena's tail).
    pub tail: Option<u64>,
    /// Everything `print_allocations` printed, line by line.
    pub lines: Vec<String>,
}

/// One set of inputs and TFLM's outputs for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// `zeros`, `seed<S>`, `bmp-<stem>` or `given<I>`.
    pub name: String,
    /// `zeros`, `random`, `bmp` or `given`.
    pub kind: String,
    /// The generator's seed, for `random` cases.
    pub seed: Option<u32>,
    /// Input files, one per model input, relative to the manifest's folder.
    pub inputs: Vec<String>,
    /// Output files, one per model output, relative to the manifest's folder.
    pub outputs: Vec<String>,
}

/// An oracle run's `manifest.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The folder the manifest and its files are in.
    pub dir: PathBuf,
    /// The model file the oracle ran.
    pub model: PathBuf,
    /// Its SHA-256, lowercase hex.
    pub model_sha256: String,
    /// The `tflite-micro` package version installed beside the oracle (the one that
    /// computed the outputs where [`interpreter`](Self::interpreter) is `tflm`).
    pub tflite_micro: String,
    /// The interpreter that computed the outputs: `tflm` (TFLM's), or `litert-builtin-ref`
    /// (TensorFlow Lite's reference kernels, through `ai-edge-litert`, for the ops TFLM does
    /// not have; its arena figures are then absent). `tflm` where the manifest names none.
    pub interpreter: String,
    /// The arena size the interpreter was given.
    pub arena_size: u64,
    /// What TFLM used of it.
    pub arena: Arena,
    /// The range of random float inputs.
    pub float_range: (f64, f64),
    /// The model's inputs.
    pub inputs: Vec<Tensor>,
    /// The model's outputs.
    pub outputs: Vec<Tensor>,
    /// The cases, in the order they ran.
    pub cases: Vec<Case>,
}

fn bad(why: impl Into<String>) -> Error {
    Error::Manifest(why.into())
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, Error> {
    v.get(key).ok_or_else(|| bad(format!("no {key:?}")))
}

fn string(v: &Value, key: &str) -> Result<String, Error> {
    field(v, key)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(format!("{key:?} is not a string")))
}

fn uint(v: &Value, key: &str) -> Result<u64, Error> {
    field(v, key)?
        .as_u64()
        .ok_or_else(|| bad(format!("{key:?} is not a non-negative integer")))
}

fn usize_of(v: &Value, key: &str) -> Result<usize, Error> {
    usize::try_from(uint(v, key)?).map_err(|_| bad(format!("{key:?} is too large")))
}

fn array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, Error> {
    field(v, key)?
        .as_array()
        .ok_or_else(|| bad(format!("{key:?} is not a list")))
}

fn opt_uint(v: &Value, key: &str) -> Result<Option<u64>, Error> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .map(Some)
            .ok_or_else(|| bad(format!("{key:?} is not a non-negative integer"))),
    }
}

/// A file name from the manifest: a plain name in the manifest's folder.
fn file_name(v: &Value) -> Result<String, Error> {
    let name = v
        .as_str()
        .ok_or_else(|| bad("a file name that is not a string"))?;
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(bad(format!("file name {name:?} is not a plain name")));
    }
    Ok(name.to_string())
}

fn tensor(v: &Value) -> Result<Tensor, Error> {
    let dtype = string(v, "dtype")?;
    let shape = array(v, "shape")?
        .iter()
        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a shape that is not a list of non-negative integers"))?;
    let scale = array(v, "scale")?
        .iter()
        .map(|s| s.as_f64().map(|s| s as f32))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a scale that is not a list of numbers"))?;
    let zero_point = array(v, "zero_point")?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a zero_point that is not a list of integers"))?;
    if scale.len() != zero_point.len() {
        return Err(bad("scale and zero_point of different lengths"));
    }
    Ok(Tensor {
        index: usize_of(v, "index")?,
        tensor: usize_of(v, "tensor")?,
        name: string(v, "name")?,
        dtype: DType::from_name(&dtype).ok_or_else(|| bad(format!("dtype {dtype:?}")))?,
        shape,
        scale,
        zero_point,
        quantized_dimension: usize_of(v, "quantized_dimension")?,
    })
}

impl Manifest {
    /// Reads `manifest.json`, given its path or its folder's.
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest, Error> {
        let path = path.as_ref();
        let file = if path.is_dir() {
            path.join("manifest.json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|e| Error::Io(file.clone(), e))?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Manifest::parse(&text, dir)
    }

    /// A manifest from its text; `dir` is where its files are.
    pub fn parse(text: &str, dir: PathBuf) -> Result<Manifest, Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let format = string(&v, "format")?;
        if format != "ember-tflm-oracle/1" {
            return Err(bad(format!("format {format:?}")));
        }
        let arena_v = field(&v, "arena")?;
        let arena = Arena {
            total: opt_uint(arena_v, "total")?,
            head: opt_uint(arena_v, "head")?,
            tail: opt_uint(arena_v, "tail")?,
            lines: array(arena_v, "lines")?
                .iter()
                .map(|l| l.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| bad("arena lines that are not strings"))?,
        };
        let range = array(&v, "float_range")?;
        let float_range = match range.as_slice() {
            [lo, hi] => lo.as_f64().zip(hi.as_f64()),
            _ => None,
        }
        .ok_or_else(|| bad("float_range is not two numbers"))?;
        let inputs = array(&v, "inputs")?
            .iter()
            .map(tensor)
            .collect::<Result<Vec<_>, _>>()?;
        let outputs = array(&v, "outputs")?
            .iter()
            .map(tensor)
            .collect::<Result<Vec<_>, _>>()?;
        for (list, what) in [(&inputs, "input"), (&outputs, "output")] {
            if list.iter().enumerate().any(|(k, t)| t.index != k) {
                return Err(bad(format!("{what} indices out of order")));
            }
        }
        let mut cases = Vec::new();
        for c in array(&v, "cases")? {
            let files = |key: &str, want: usize| -> Result<Vec<String>, Error> {
                let list = array(c, key)?
                    .iter()
                    .map(file_name)
                    .collect::<Result<Vec<_>, _>>()?;
                if list.len() != want {
                    return Err(bad(format!(
                        "a case with {} {key} for {want} tensors",
                        list.len()
                    )));
                }
                Ok(list)
            };
            let seed = opt_uint(c, "seed")?
                .map(|s| u32::try_from(s).map_err(|_| bad(format!("seed {s} ≥ 2^32"))))
                .transpose()?;
            cases.push(Case {
                name: string(c, "name")?,
                kind: string(c, "kind")?,
                seed,
                inputs: files("inputs", inputs.len())?,
                outputs: files("outputs", outputs.len())?,
            });
        }
        let oracle = field(&v, "oracle")?;
        Ok(Manifest {
            dir,
            model: PathBuf::from(string(&v, "model")?),
            model_sha256: string(&v, "model_sha256")?,
            tflite_micro: string(oracle, "tflite_micro")?,
            interpreter: match oracle.get("interpreter") {
                None => "tflm".to_string(),
                Some(_) => string(oracle, "interpreter")?,
            },
            arena_size: uint(&v, "arena_size")?,
            arena,
            float_range,
            inputs,
            outputs,
            cases,
        })
    }

    /// The case named `name`.
    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.name == name)
    }

    /// The inputs `case` fed to the model, each checked against its declared type and shape.
    pub fn read_inputs(&self, case: &Case) -> Result<Vec<Array>, Error> {
        self.read(&case.inputs, &self.inputs)
    }

    /// TFLM's outputs for `case`, each checked against its declared type and shape.
    pub fn read_outputs(&self, case: &Case) -> Result<Vec<Array>, Error> {
        self.read(&case.outputs, &self.outputs)
    }

    fn read(&self, files: &[String], tensors: &[Tensor]) -> Result<Vec<Array>, Error> {
        files
            .iter()
            .zip(tensors)
            .map(|(file, t)| {
                let a = crate::read(self.dir.join(file))?;
                if a.dtype() != t.dtype || a.shape() != t.shape.as_slice() {
                    return Err(bad(format!(
                        "{file}: {} {:?}, but tensor {} is {} {:?}",
                        a.dtype(),
                        a.shape(),
                        t.index,
                        t.dtype,
                        t.shape
                    )));
                }
                Ok(a)
            })
            .collect()
    }
}

/// SplitMix64 (Steele, Lea and Flood), as the oracle draws its random inputs.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream for `seed` and model input `input_index`: state `(seed << 32) + index`.
    pub fn new(seed: u32, input_index: usize) -> Self {
        SplitMix64((u64::from(seed) << 32).wrapping_add(input_index as u64))
    }

    /// The next output.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The oracle's random input for `seed` and model input `input_index` of `dtype` and
/// `shape`, bit for bit (the generator is documented in `xtask/oracle/tflm_oracle.py`):
/// integers from the top bits of each draw, over the type's full range; floats
/// `lo + ((hi - lo) * (z >> 40)) / 2^24` in f64, rounded to f32.
pub fn random_input(
    seed: u32,
    input_index: usize,
    dtype: DType,
    shape: &[usize],
    float_range: (f64, f64),
) -> Result<Array, Error> {
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::Shape {
            shape: shape.to_vec(),
            len: 0,
        })?;
    let mut rng = SplitMix64::new(seed, input_index);
    let draws = (0..count).map(move |_| rng.next_u64());
    let (lo, hi) = float_range;
    let data = match dtype {
        DType::I8 => Data::I8(draws.map(|z| (z >> 56) as u8 as i8).collect()),
        DType::U8 => Data::U8(draws.map(|z| (z >> 56) as u8).collect()),
        DType::I16 => Data::I16(draws.map(|z| (z >> 48) as u16 as i16).collect()),
        DType::I32 => Data::I32(draws.map(|z| (z >> 32) as u32 as i32).collect()),
        DType::Bool => Data::Bool(draws.map(|z| z >> 63 == 1).collect()),
        DType::F32 => Data::F32(
            draws
                .map(|z| (lo + ((hi - lo) * (z >> 40) as f64) / 16_777_216.0) as f32)
                .collect(),
        ),
    };
    Array::new(shape.to_vec(), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // SplitMix64 from state 0: the reference implementation's first outputs.
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn random_input_is_deterministic_and_in_range() {
        let a = random_input(7, 1, DType::F32, &[2, 3], (-1.0, 1.0)).unwrap();
        assert_eq!(
            a,
            random_input(7, 1, DType::F32, &[2, 3], (-1.0, 1.0)).unwrap()
        );
        assert_ne!(
            a,
            random_input(7, 0, DType::F32, &[2, 3], (-1.0, 1.0)).unwrap()
        );
        assert!(a.as_f32().unwrap().iter().all(|x| (-1.0..1.0).contains(x)));
        let b = random_input(0, 0, DType::I8, &[4096], (-1.0, 1.0)).unwrap();
        let b = b.as_i8().unwrap();
        assert!(b.contains(&i8::MIN) && b.contains(&i8::MAX));
    }
}
