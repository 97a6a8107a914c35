//! From FlatBuffer bytes to a [`Graph`]: the file's structure, the tensors, the ops and the
//! graph's data flow. Each op's options, types and shapes are checked by its family's rule ([`crate::ops`]).

use crate::builtin_names::BUILTIN_NAMES;
use crate::check::{self, RawOp};
use crate::tflite;
use crate::{
    ElementType, Graph, ImportError, Op, OpSite, Quantization, Refusals, Tensor, TensorId,
    TensorSite,
};
use planus::errors::ErrorKind;
use planus::{ReadAsRoot, Vector};

/// The schema version the importer reads.
const SCHEMA_VERSION: u32 = 3;
/// The builtin code of custom ops.
const CUSTOM: i32 = 32;

/// A planus result with the place it was read from named.
trait At<T> {
    fn at(self, at: impl FnOnce() -> String) -> Result<T, ImportError>;
}

impl<T> At<T> for planus::Result<T> {
    fn at(self, at: impl FnOnce() -> String) -> Result<T, ImportError> {
        self.map_err(|source| ImportError::Malformed { at: at(), source })
    }
}

fn model() -> String {
    "model".to_string()
}

/// Parses and validates `bytes`.
impl<'a> Graph<'a> {
    /// Parses and validates a `.tflite` file. Bad input of any kind is an [`ImportError`],
    /// never a panic.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ImportError> {
        read(bytes)
    }
}

fn read(bytes: &[u8]) -> Result<Graph<'_>, ImportError> {
    let ident = bytes
        .get(4..8)
        .ok_or(ImportError::TooShort { len: bytes.len() })?;
    if ident != b"TFL3" {
        let mut found = [0; 4];
        found.copy_from_slice(ident);
        return Err(ImportError::FileIdentifier { found });
    }
    let model_ref = tflite::ModelRef::read_as_root(bytes).at(model)?;
    let version = model_ref.version().at(model)?;
    if version != SCHEMA_VERSION {
        return Err(ImportError::SchemaVersion { found: version });
    }
    let subgraphs = model_ref.subgraphs().at(model)?;
    let count = subgraphs.map_or(0, |s| s.len());
    let subgraph = match subgraphs.and_then(|s| s.first()) {
        Some(s) if count == 1 => s.at(model)?,
        _ => return Err(ImportError::SubgraphCount { found: count }),
    };
    let buffers = model_ref
        .buffers()
        .at(model)?
        .unwrap_or(Vector::new_empty());

    // What the model asks that the importer does not take is gathered, so that one report
    // names all of it; a broken file stops the reading at once.
    let mut refusals = Vec::new();

    let mut tensors = Vec::new();
    let mut tensor_count = 0;
    if let Some(list) = subgraph.tensors().at(model)? {
        tensor_count = list.len();
        for (index, t) in list.iter().enumerate() {
            let t = t.at(|| format!("tensor {index}"))?;
            tensors.extend(gather(
                &mut refusals,
                read_tensor(index, t, buffers, bytes),
            )?);
        }
    }
    // Every tensor read: the graph's inputs, outputs and ops can be checked against them.
    let tensors_whole = tensors.len() == tensor_count;

    let codes = model_ref.operator_codes().at(model)?;
    let mut raw_ops = Vec::new();
    let mut op_count = 0;
    if let Some(list) = subgraph.operators().at(model)? {
        op_count = list.len();
        for (index, op) in list.iter().enumerate() {
            let op = op.at(|| format!("op {index}"))?;
            raw_ops.extend(gather(
                &mut refusals,
                read_op(index, op, codes, tensor_count),
            )?);
        }
    }

    let mut graph = None;
    if tensors_whole {
        let inputs = graph_io(subgraph.inputs().at(model)?, "input", &tensors)?;
        let outputs = graph_io(subgraph.outputs().at(model)?, "output", &tensors)?;
        // With an op left out, the tensors it writes would seem unwritten.
        if raw_ops.len() == op_count {
            check_data_flow(&tensors, &raw_ops, &inputs, &outputs)?;
        }
        let mut ops = Vec::with_capacity(raw_ops.len());
        for raw in raw_ops {
            if let Some(kind) = gather(&mut refusals, check::check(&raw, &tensors))? {
                ops.push(Op {
                    index: raw.site.index,
                    kind,
                    inputs: raw.inputs,
                    outputs: raw.outputs,
                });
            }
        }
        graph = Some((ops, inputs, outputs));
    }
    match (refusals.len(), graph) {
        (0, Some((ops, inputs, outputs))) => Ok(Graph::new(tensors, ops, inputs, outputs)),
        (1, _) => Err(refusals.remove(0)),
        _ => Err(ImportError::Refused(Refusals { problems: refusals })),
    }
}

/// `result`'s value; a refusal ([`ImportError::is_refusal`]) added to `refusals` instead
/// (`None`), any other error returned.
fn gather<T>(
    refusals: &mut Vec<ImportError>,
    result: Result<T, ImportError>,
) -> Result<Option<T>, ImportError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.is_refusal() => {
            refusals.push(e);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn site(index: usize, name: &str) -> TensorSite {
    TensorSite {
        index,
        name: name.to_string(),
    }
}

/// One tensor: type, shape, quantization and constant data, each checked.
fn read_tensor<'a>(
    index: usize,
    t: tflite::TensorRef<'a>,
    buffers: Vector<'a, planus::Result<tflite::BufferRef<'a>>>,
    file: &'a [u8],
) -> Result<Tensor<'a>, ImportError> {
    let name = t.name().at(|| format!("tensor {index}"))?.unwrap_or("");
    let at = || site(index, name).to_string();
    let unsupported = |what| ImportError::UnsupportedTensor {
        tensor: site(index, name),
        what,
    };

    let element_type = match t.type_() {
        Ok(ty) => ElementType::from_tflite(ty).ok_or_else(|| ImportError::UnsupportedType {
            tensor: site(index, name),
            found: format!("{ty:?}").to_lowercase(),
        })?,
        Err(planus::Error {
            error_kind: ErrorKind::UnknownEnumTag { source },
            ..
        }) => {
            return Err(ImportError::UnsupportedType {
                tensor: site(index, name),
                found: format!("tag {}", source.tag),
            })
        }
        Err(e) => return Err(e).at(at),
    };
    if t.sparsity().at(at)?.is_some() {
        return Err(unsupported("sparse storage"));
    }
    if t.is_variable().at(at)? {
        return Err(unsupported("a variable tensor"));
    }
    if t.external_buffer().at(at)? != 0 {
        return Err(unsupported("data in an external file"));
    }

    let file_shape: Vec<i32> = t
        .shape()
        .at(at)?
        .map_or_else(Vec::new, |v| v.iter().collect());
    let signature: Vec<i32> = t
        .shape_signature()
        .at(at)?
        .map_or_else(Vec::new, |v| v.iter().collect());
    let (shape, dynamic_batch) = static_shape(&file_shape, &signature).map_err(|e| match e {
        ShapeError::Dynamic => ImportError::DynamicShape {
            tensor: site(index, name),
            shape: file_shape.clone(),
            signature: signature.clone(),
        },
        ShapeError::Empty => ImportError::UnsupportedTensor {
            tensor: site(index, name),
            what: "a tensor with a dimension of 0 (no elements)",
        },
        ShapeError::Bad(reason) => ImportError::Shape {
            tensor: site(index, name),
            reason,
        },
    })?;
    let expected = shape
        .iter()
        .try_fold(element_type.size(), |n, &d| n.checked_mul(d))
        .ok_or_else(|| ImportError::Shape {
            tensor: site(index, name),
            reason: format!("{shape:?} of {element_type} overflows usize bytes"),
        })?;

    let quantization =
        read_quantization(t.quantization().at(at)?, element_type, &shape).map_err(|reason| {
            ImportError::Quantization {
                tensor: site(index, name),
                reason,
            }
        })?;

    let buffer = t.buffer().at(at)?;
    let data = if buffer == 0 && buffers.is_empty() {
        // No buffer list at all: buffer 0 is the empty sentinel by convention.
        &[][..]
    } else {
        let b = buffers
            .get(buffer as usize)
            .ok_or(ImportError::BufferIndex {
                tensor: site(index, name),
                index: buffer,
                count: buffers.len(),
            })?
            .at(|| format!("buffer {buffer}"))?;
        buffer_data(buffer, b, file)?
    };
    let data = if data.is_empty() {
        None
    } else if data.len() != expected {
        return Err(ImportError::BufferSize {
            tensor: site(index, name),
            buffer,
            shape,
            element_type,
            expected,
            found: data.len(),
        });
    } else {
        Some(data)
    };

    Ok(Tensor {
        name,
        element_type,
        shape,
        dynamic_batch,
        quantization,
        data,
    })
}

/// A buffer's bytes: inside the FlatBuffer, or (models over 2 GiB) at `offset` in the file.
fn buffer_data<'a>(
    index: u32,
    b: tflite::BufferRef<'a>,
    file: &'a [u8],
) -> Result<&'a [u8], ImportError> {
    let at = || format!("buffer {index}");
    let offset = b.offset().at(at)?;
    if offset > 1 {
        let size = b.size().at(at)?;
        let outside = || ImportError::BufferOutsideFile {
            buffer: index,
            offset,
            size,
            file_len: file.len(),
        };
        let start = usize::try_from(offset).map_err(|_| outside())?;
        let len = usize::try_from(size).map_err(|_| outside())?;
        let end = start.checked_add(len).ok_or_else(outside)?;
        return file.get(start..end).ok_or_else(outside);
    }
    Ok(b.data().at(at)?.unwrap_or(&[]))
}

enum ShapeError {
    Dynamic,
    /// A dimension of 0: a tensor of no elements (TFLite's LSTM intermediates).
    Empty,
    Bad(String),
}

/// The static shape from `shape` and `shape_signature`: every dimension at least 1 (a 0 is
/// an empty tensor, which the importer does not take); a -1 in the signature only for
/// dimension 0 where `shape` says 1.
fn static_shape(shape: &[i32], signature: &[i32]) -> Result<(Vec<usize>, bool), ShapeError> {
    let mut dims = Vec::with_capacity(shape.len());
    for &d in shape {
        if d < 0 {
            return Err(ShapeError::Dynamic);
        }
        if d == 0 {
            return Err(ShapeError::Empty);
        }
        dims.push(d as usize);
    }
    let mut dynamic_batch = false;
    if !signature.is_empty() {
        if signature.len() != shape.len() {
            return Err(ShapeError::Bad(format!(
                "shape_signature {signature:?} has another rank than shape {shape:?}"
            )));
        }
        for (i, (&s, &d)) in signature.iter().zip(shape).enumerate() {
            if s == d {
                continue;
            }
            if i == 0 && s == -1 && d == 1 {
                dynamic_batch = true;
                continue;
            }
            return Err(ShapeError::Dynamic);
        }
    }
    Ok((dims, dynamic_batch))
}

/// Scales and zero points, per tensor or along a dimension. TFLM ignores the quantized
/// dimension of rank-1 tensors (person_detect's biases say 3); so does this.
fn read_quantization(
    q: Option<tflite::QuantizationParametersRef<'_>>,
    ty: ElementType,
    shape: &[usize],
) -> Result<Option<Quantization>, String> {
    let Some(q) = q else { return Ok(None) };
    let err = |e: planus::Error| format!("malformed quantization parameters: {e}");
    if q.details().map_err(err)?.is_some() {
        return Err("custom, blockwise or multi-axis quantization is not supported".into());
    }
    let scales: Vec<f32> = q
        .scale()
        .map_err(err)?
        .map_or_else(Vec::new, |v| v.iter().collect());
    if scales.is_empty() {
        // min/max only (left for TensorFlow): no quantization.
        return Ok(None);
    }
    let zero_points: Vec<i64> = q
        .zero_point()
        .map_err(err)?
        .map_or_else(Vec::new, |v| v.iter().collect());
    if zero_points.len() != scales.len() {
        return Err(format!(
            "{} scales but {} zero points",
            scales.len(),
            zero_points.len()
        ));
    }
    if let Some((i, s)) = scales
        .iter()
        .enumerate()
        .find(|(_, s)| !(s.is_finite() && **s > 0.0))
    {
        return Err(format!("scale {i} is {s}, not finite and positive"));
    }
    if let Some((lo, hi)) = ty.zero_point_range() {
        if let Some((i, z)) = zero_points
            .iter()
            .enumerate()
            .find(|(_, z)| !(lo..=hi).contains(*z))
        {
            return Err(format!("zero point {i} is {z}, outside {ty}"));
        }
    }
    if scales.len() == 1 {
        return Ok(Some(Quantization::PerTensor {
            scale: scales[0],
            zero_point: zero_points[0],
        }));
    }
    let dim = q.quantized_dimension().map_err(err)?;
    let axis = match usize::try_from(dim) {
        Ok(a) if shape.get(a) == Some(&scales.len()) => a,
        _ if shape.len() == 1 && shape[0] == scales.len() => 0,
        _ => {
            return Err(format!(
                "{} scales along quantized_dimension {dim} of shape {shape:?}",
                scales.len()
            ))
        }
    };
    Ok(Some(Quantization::PerChannel {
        scales,
        zero_points,
        axis,
    }))
}

/// The graph's input or output list.
fn graph_io(
    list: Option<Vector<'_, i32>>,
    which: &'static str,
    tensors: &[Tensor<'_>],
) -> Result<Vec<TensorId>, ImportError> {
    let mut ids = Vec::new();
    for (position, index) in list.into_iter().flatten().enumerate() {
        let id = tensor_id(index, tensors.len()).ok_or_else(|| ImportError::TensorIndex {
            at: format!("graph {which} {position}"),
            index: index.into(),
            count: tensors.len(),
        })?;
        let t = &tensors[id.index()];
        let io = |reason| ImportError::GraphIo {
            which,
            position,
            tensor: site(id.index(), t.name),
            reason,
        };
        if ids.contains(&id) {
            return Err(io("is listed twice"));
        }
        if t.is_constant() {
            return Err(io("is a constant"));
        }
        ids.push(id);
    }
    Ok(ids)
}

fn tensor_id(index: i32, count: usize) -> Option<TensorId> {
    let i = u32::try_from(index).ok()?;
    ((i as usize) < count).then_some(TensorId(i))
}

/// The op's name for messages: the schema name, a custom op's code, or the raw code.
fn op_name(builtin: i32, custom: Option<&str>) -> String {
    if builtin == CUSTOM {
        return format!("CUSTOM `{}`", custom.unwrap_or(""));
    }
    match BUILTIN_NAMES.iter().find(|(code, _)| *code == builtin) {
        Some((_, name)) => (*name).to_string(),
        None => format!("builtin code {builtin}"),
    }
}

/// One op: its operator code, its tensor indices, its raw options.
fn read_op<'a>(
    index: usize,
    op: tflite::OperatorRef<'a>,
    codes: Option<Vector<'a, planus::Result<tflite::OperatorCodeRef<'a>>>>,
    tensor_count: usize,
) -> Result<RawOp<'a>, ImportError> {
    let codes = codes.unwrap_or(Vector::new_empty());
    let at = || format!("op {index}");
    let code_index = op.opcode_index().at(at)?;
    let code = codes
        .get(code_index as usize)
        .ok_or(ImportError::OpcodeIndex {
            op: index,
            index: code_index,
            count: codes.len(),
        })?
        .at(|| format!("operator code {code_index}"))?;
    let code_at = || format!("operator code {code_index}");
    let deprecated = i32::from(code.deprecated_builtin_code().at(code_at)?);
    // An extended code this schema does not know is still a code: report it as unsupported.
    let extended = match code.builtin_code() {
        Ok(b) => b as i32,
        Err(planus::Error {
            error_kind: ErrorKind::UnknownEnumTag { source },
            ..
        }) => i32::try_from(source.tag).unwrap_or(i32::MAX),
        Err(e) => return Err(e).at(code_at),
    };
    let builtin_code = deprecated.max(extended);
    let custom = code.custom_code().at(code_at)?;
    let site = OpSite {
        index,
        name: op_name(builtin_code, custom),
    };
    let entry = if builtin_code == CUSTOM {
        crate::ops::find_custom(custom.unwrap_or(""))
    } else {
        crate::ops::find(builtin_code)
    };
    let Some(entry) = entry else {
        return Err(ImportError::UnsupportedOp { op: site });
    };
    let at = || site.to_string();

    let count = tensor_count;
    let mut inputs = Vec::new();
    for (slot, i) in op.inputs().at(at)?.into_iter().flatten().enumerate() {
        if i == -1 {
            inputs.push(None);
            continue;
        }
        inputs.push(Some(tensor_id(i, count).ok_or_else(|| {
            ImportError::TensorIndex {
                at: format!("{site} input {slot}"),
                index: i.into(),
                count,
            }
        })?));
    }
    let mut outputs = Vec::new();
    for (slot, i) in op.outputs().at(at)?.into_iter().flatten().enumerate() {
        outputs.push(tensor_id(i, count).ok_or_else(|| ImportError::TensorIndex {
            at: format!("{site} output {slot}"),
            index: i.into(),
            count,
        })?);
    }
    let unsupported = |option, value: String| ImportError::UnsupportedOption {
        op: site.clone(),
        option,
        value,
        supported: "none",
    };
    if let Some(v) = op.intermediates().at(at)? {
        if !v.is_empty() {
            return Err(unsupported(
                "intermediates",
                format!("({} tensors)", v.len()),
            ));
        }
    }
    if let Some(v) = op.mutating_variable_inputs().at(at)? {
        for m in v.iter() {
            if m {
                return Err(unsupported("mutating_variable_inputs", "true".into()));
            }
        }
    }
    if op.builtin_options_2().at(at)?.is_some() {
        return Err(unsupported("builtin_options_2", "(set)".into()));
    }
    let options = op.builtin_options().at(at)?;
    let mut custom_options: &[u8] = &[];
    if builtin_code == CUSTOM {
        if op.large_custom_options_size().at(at)? != 0 {
            return Err(unsupported(
                "large_custom_options_offset",
                "(options outside the FlatBuffer)".into(),
            ));
        }
        if op.custom_options_format().at(at)? != tflite::CustomOptionsFormat::Flexbuffers {
            return Err(unsupported(
                "custom_options_format",
                "(not FLEXBUFFERS)".into(),
            ));
        }
        custom_options = op.custom_options().at(at)?.unwrap_or(&[]);
    }
    Ok(RawOp {
        site,
        rule: entry.rule,
        options,
        custom_options,
        inputs,
        outputs,
    })
}

/// Who wrote a tensor first.
#[derive(Clone, Copy)]
enum Writer {
    GraphInput,
    Op(usize),
}

/// Every tensor an op reads is a graph input, a constant or written by an earlier op; no
/// tensor is written twice; every graph output is written.
fn check_data_flow(
    tensors: &[Tensor<'_>],
    ops: &[RawOp<'_>],
    inputs: &[TensorId],
    outputs: &[TensorId],
) -> Result<(), ImportError> {
    let tsite = |id: TensorId| site(id.index(), tensors[id.index()].name);
    let mut writer: Vec<Option<Writer>> = vec![None; tensors.len()];
    for &id in inputs {
        writer[id.index()] = Some(Writer::GraphInput);
    }
    let describe = |w: Writer, ops: &[RawOp<'_>]| match w {
        Writer::GraphInput => "as a graph input".to_string(),
        Writer::Op(i) => format!("by {}", ops[i].site),
    };
    for (i, op) in ops.iter().enumerate() {
        for id in op.inputs.iter().flatten() {
            if !tensors[id.index()].is_constant() && writer[id.index()].is_none() {
                return Err(ImportError::Unwritten {
                    op: op.site.clone(),
                    tensor: tsite(*id),
                });
            }
        }
        for &id in &op.outputs {
            if tensors[id.index()].is_constant() {
                return Err(ImportError::WrittenTwice {
                    tensor: tsite(id),
                    first: "as constant data".into(),
                    second: format!("by {}", op.site),
                });
            }
            if let Some(w) = writer[id.index()] {
                return Err(ImportError::WrittenTwice {
                    tensor: tsite(id),
                    first: describe(w, ops),
                    second: format!("by {}", op.site),
                });
            }
            writer[id.index()] = Some(Writer::Op(i));
        }
    }
    for (position, &id) in outputs.iter().enumerate() {
        if writer[id.index()].is_none() {
            return Err(ImportError::OutputUnwritten {
                position,
                tensor: tsite(id),
            });
        }
    }
    Ok(())
}
