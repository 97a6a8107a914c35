//! The TFLite importer on arbitrary bytes (seeded with the reference models): it must never
//! panic, and on what it accepts the graph must hold together, its memory plans keep their
//! promises, and lowering it to a module either fails with an error or gives a module that
//! parses.

#![no_main]

use ember_import::{Graph, MemoryPlan, Tensor, TensorId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(graph) = Graph::parse(data) else {
        return;
    };
    walk(&graph);
    for alignment in [1, 16, 64] {
        let Ok(plan) = graph.plan(alignment) else {
            continue;
        };
        check_plan(&graph, &plan);
    }
    if let Ok(lowered) = ember_import::lower(&graph, "fuzz") {
        assert!(hal_core::module::Module::parse(&lowered.built.bytes).is_ok());
    }
});

/// Every index in range, every constant exactly its shape's bytes, every op's text renders.
fn walk(graph: &Graph<'_>) {
    let count = graph.tensors().len();
    let in_range = |id: &TensorId| id.index() < count;
    assert!(graph.inputs().iter().all(in_range));
    assert!(graph.outputs().iter().all(in_range));
    for t in graph.tensors() {
        check_tensor(t);
    }
    for (i, op) in graph.ops().iter().enumerate() {
        assert_eq!(op.index, i);
        assert!(op.input_ids().all(|id| in_range(&id)));
        assert!(op.outputs.iter().all(in_range));
        assert!(!op.kind.options().to_string().contains('\n'));
        for out in &op.outputs {
            assert!(!graph.tensor(*out).is_constant());
        }
    }
    let _ = graph.constant_bytes();
}

fn check_tensor(t: &Tensor<'_>) {
    assert!(t.shape.iter().all(|&d| d >= 1));
    if let Some(data) = t.data {
        assert_eq!(data.len(), t.byte_size());
    }
    if let Some(q) = &t.quantization {
        assert_eq!(q.scales().len(), q.zero_points().len());
        assert!(q.scales().iter().all(|s| s.is_finite() && *s > 0.0));
        if let Some(axis) = q.axis() {
            assert_eq!(t.shape[axis], q.scales().len());
        }
    }
}

/// Offsets aligned and inside the arena; buffers that live at the same time apart; each
/// used non-constant tensor placed in a buffer of its size.
fn check_plan(graph: &Graph<'_>, plan: &MemoryPlan) {
    let buffers = plan.buffers();
    for (i, b) in buffers.iter().enumerate() {
        assert_eq!(b.offset % plan.alignment(), 0);
        assert!(b.end() <= plan.arena_size());
        for c in &buffers[i + 1..] {
            if b.overlaps_in_time(c) {
                assert!(b.end() <= c.offset || c.end() <= b.offset);
            }
        }
    }
    for op in graph.ops() {
        for id in op.input_ids().chain(op.outputs.iter().copied()) {
            let t = graph.tensor(id);
            match plan.placement(id) {
                Some(p) => {
                    assert_eq!(p.size, t.byte_size());
                    assert!(buffers[p.buffer].tensors.contains(&id));
                }
                None => assert!(t.is_constant()),
            }
        }
    }
    assert!(plan.arena_size() <= plan.unshared_size());
}
