//! `cargo xtask import MODEL.tflite`: a TensorFlow Lite model parsed and validated by
//! `ember-import`, shown as its op table, its tensors and its static memory plan, and
//! lowered to a module as `cargo xtask run` lowers it.

use crate::step::Result;
use ember_import::{Graph, ShapeDisplay, Tensor, TensorId, DEFAULT_ALIGNMENT};
use std::fmt::Write as _;
use std::path::Path;

/// Parses `model`, prints what it holds and its arena plan, then lowers it to a module as
/// `cargo xtask run` does, failing where the lowering refuses it. Writing the module
/// (`output`) is refused for now.
pub fn import(model: &Path, output: Option<&Path>) -> Result {
    if let Some(out) = output {
        return Err(format!(
            "import {} -o {}: lowering to an Ember module is not implemented yet",
            model.display(),
            out.display()
        ));
    }
    let bytes = std::fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    let graph = Graph::parse(&bytes).map_err(|e| format!("{}: {e}", model.display()))?;
    let plan = graph
        .plan(DEFAULT_ALIGNMENT)
        .map_err(|e| format!("{}: {e}", model.display()))?;
    print!("{}", report(model, bytes.len(), &graph, &plan));
    // What `cargo xtask run` does next: a model that parses but has no kernels for an op
    // is refused here too, not accepted and then refused by the run.
    let name = model
        .file_stem()
        .map_or("model".into(), |s| s.to_string_lossy());
    ember_import::lower(&graph, &name).map_err(|e| {
        format!(
            "{}: parsed, but not lowered to a module: {e}",
            model.display()
        )
    })?;
    Ok(())
}

/// `int8[1, 96, 96, 1]`.
fn typed(t: &Tensor<'_>) -> String {
    format!("{}{}", t.element_type, ShapeDisplay(&t.shape))
}

fn report(
    model: &Path,
    file_len: usize,
    graph: &Graph<'_>,
    plan: &ember_import::MemoryPlan,
) -> String {
    let mut s = String::new();
    let ids = |list: &[TensorId]| {
        list.iter()
            .map(|id| format!("{id} {}", typed(graph.tensor(*id))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        s,
        "{}: {file_len} bytes, {} ops, {} tensors; inputs {}; outputs {}",
        model.display(),
        graph.ops().len(),
        graph.tensors().len(),
        ids(graph.inputs()),
        ids(graph.outputs()),
    );

    let _ = writeln!(s, "\nops:");
    for op in graph.ops() {
        let inputs: Vec<String> = op
            .inputs
            .iter()
            .map(|i| match i {
                Some(id) => {
                    let t = graph.tensor(*id);
                    let constant = if t.is_constant() { " const" } else { "" };
                    format!("{id} {}{constant}", typed(t))
                }
                None => "(none)".to_string(),
            })
            .collect();
        let head = format!(
            "  {:>3}  {:<18} {}",
            op.index,
            op.kind.name(),
            op.kind.options()
        );
        let _ = writeln!(
            s,
            "{}\n         in:  {}\n         out: {}",
            head.trim_end(),
            inputs.join(", "),
            ids(&op.outputs)
        );
    }

    let constants = graph.tensors().iter().filter(|t| t.is_constant()).count();
    let _ = writeln!(
        s,
        "\nconstants: {} bytes in {constants} tensors",
        graph.constant_bytes()
    );

    let _ = writeln!(s, "\ntensors:");
    let _ = writeln!(
        s,
        "  {:>5}  {:<22} {:<30} {:<32} name",
        "id", "type and shape", "storage", "quantization"
    );
    for (i, t) in graph.tensors().iter().enumerate() {
        let id = TensorId(i as u32);
        let quant = t
            .quantization
            .as_ref()
            .map_or_else(|| "-".to_string(), |q| q.to_string());
        let storage = match (t.data, plan.placement(id)) {
            (Some(d), _) => format!("constant, {} bytes", d.len()),
            (None, Some(p)) => format!("arena @{} +{} (buf {})", p.offset, p.size, p.buffer),
            (None, None) => "unused".to_string(),
        };
        let batch = if t.dynamic_batch {
            "  (dynamic batch, pinned to 1)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {:>5}  {:<22} {:<30} {:<32} {}{batch}",
            id.to_string(),
            typed(t),
            storage,
            quant,
            t.name
        );
    }

    let _ = writeln!(
        s,
        "\narena plan (alignment {}): {} bytes ({} without reuse)",
        plan.alignment(),
        plan.arena_size(),
        plan.unshared_size()
    );
    let _ = writeln!(
        s,
        "  {:>6}  {:>8}  {:>8}  {:>9}  tensors",
        "buffer", "offset", "size", "ops"
    );
    for (i, b) in plan.buffers().iter().enumerate() {
        let tensors: Vec<String> = b
            .tensors
            .iter()
            .map(|id| format!("{id} `{}`", graph.tensor(*id).name))
            .collect();
        let _ = writeln!(
            s,
            "  {:>6}  {:>8}  {:>8}  {:>9}  {}",
            i,
            b.offset,
            b.size,
            format!("{}..={}", b.first_op, b.last_op),
            tensors.join(" = ")
        );
    }
    s
}
