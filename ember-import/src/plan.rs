//! The static memory plan: every non-constant tensor an offset in one arena, computed ahead
//! of time so an invocation needs one allocation.
//!
//! Liveness follows op order: a tensor lives from the op that writes it (graph inputs: op 0)
//! to the last op that reads it (graph outputs: the last op), both ends included, so an op's
//! inputs and outputs never share memory. A view (RESHAPE) shares its input's buffer, whose
//! life then covers the view's, except where both would be caller-visible tensors (graph
//! inputs or outputs): those keep storage of their own. Buffers are placed greedily, largest
//! first, each at the lowest aligned offset clear of every placed buffer whose life overlaps
//! its own, as TensorFlow Lite Micro's `GreedyMemoryPlanner` does.

use crate::{Graph, PlanError, TensorId};

/// The offset alignment of [`Graph::plan`] callers usually want: 16 bytes, as TFLM's.
pub const DEFAULT_ALIGNMENT: usize = 16;

/// One buffer of the arena, shared by a tensor and the views of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedBuffer {
    /// Offset in the arena, a multiple of the plan's alignment.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
    /// The first op during which it holds a value (graph inputs: 0).
    pub first_op: usize,
    /// The last op during which it holds a value (graph outputs: the last op).
    pub last_op: usize,
    /// The tensors stored in it: the one written first, then the views of it.
    pub tensors: Vec<TensorId>,
}

impl PlannedBuffer {
    /// True when its life and `other`'s share an op.
    pub fn overlaps_in_time(&self, other: &PlannedBuffer) -> bool {
        self.first_op <= other.last_op && other.first_op <= self.last_op
    }

    /// One past its last byte.
    pub fn end(&self) -> usize {
        self.offset + self.size
    }
}

/// Where a tensor lies in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Index of its buffer in [`MemoryPlan::buffers`].
    pub buffer: usize,
    /// Offset in the arena.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
}

/// A graph's static memory plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    alignment: usize,
    arena_size: usize,
    buffers: Vec<PlannedBuffer>,
    placements: Vec<Option<Placement>>,
}

impl MemoryPlan {
    /// Plans `graph`'s non-constant tensors (those an op or the graph's inputs and outputs
    /// use) with offsets that are multiples of `alignment`, a power of two.
    pub fn new(graph: &Graph<'_>, alignment: usize) -> Result<Self, PlanError> {
        if !alignment.is_power_of_two() {
            return Err(PlanError::Alignment(alignment));
        }
        let tensors = graph.tensors();
        let last_op = graph.ops().len().saturating_sub(1);
        let mut visible = vec![false; tensors.len()];
        for &id in graph.inputs().iter().chain(graph.outputs()) {
            visible[id.index()] = true;
        }

        // Buffers: one per tensor that is written first (graph input or op output), views
        // joining their input's.
        let mut buffer_of: Vec<Option<usize>> = vec![None; tensors.len()];
        let mut buffers: Vec<PlannedBuffer> = Vec::new();
        let mut holds_visible: Vec<bool> = Vec::new();
        let new_buffer = |id: TensorId,
                          op: usize,
                          buffers: &mut Vec<PlannedBuffer>,
                          holds_visible: &mut Vec<bool>| {
            buffers.push(PlannedBuffer {
                offset: 0,
                size: tensors[id.index()].byte_size(),
                first_op: op,
                last_op: op,
                tensors: vec![id],
            });
            holds_visible.push(visible[id.index()]);
            buffers.len() - 1
        };
        for &id in graph.inputs() {
            buffer_of[id.index()] = Some(new_buffer(id, 0, &mut buffers, &mut holds_visible));
        }
        for (i, op) in graph.ops().iter().enumerate() {
            for id in op.input_ids() {
                if let Some(b) = buffer_of[id.index()] {
                    buffers[b].last_op = buffers[b].last_op.max(i);
                }
            }
            for &out in &op.outputs {
                let shared = match (op.kind.is_view(), op.inputs.first().copied().flatten()) {
                    (true, Some(input)) => buffer_of[input.index()].filter(|&b| {
                        buffers[b].size == tensors[out.index()].byte_size()
                            && !(holds_visible[b] && visible[out.index()])
                    }),
                    _ => None,
                };
                let b = match shared {
                    Some(b) => {
                        buffers[b].tensors.push(out);
                        holds_visible[b] |= visible[out.index()];
                        buffers[b].last_op = buffers[b].last_op.max(i);
                        b
                    }
                    None => new_buffer(out, i, &mut buffers, &mut holds_visible),
                };
                buffer_of[out.index()] = Some(b);
            }
        }
        for &id in graph.outputs() {
            if let Some(b) = buffer_of[id.index()] {
                buffers[b].last_op = last_op;
            }
        }

        // Greedy placement, largest first (ties: earlier first, then lower tensor index).
        let mut order: Vec<usize> = (0..buffers.len()).collect();
        order.sort_by_key(|&b| (std::cmp::Reverse(buffers[b].size), buffers[b].first_op, b));
        let mut placed: Vec<usize> = Vec::with_capacity(buffers.len());
        let mut arena_size = 0;
        for b in order {
            let mut neighbours: Vec<usize> = placed
                .iter()
                .copied()
                .filter(|&p| buffers[p].overlaps_in_time(&buffers[b]))
                .collect();
            neighbours.sort_by_key(|&p| buffers[p].offset);
            let size = buffers[b].size;
            let mut offset = 0usize;
            for p in neighbours {
                let fits_before =
                    offset.checked_add(size).ok_or(PlanError::Overflow)? <= buffers[p].offset;
                if fits_before {
                    break;
                }
                let end = buffers[p].offset + buffers[p].size;
                offset = offset.max(align_up(end, alignment).ok_or(PlanError::Overflow)?);
            }
            let end = offset.checked_add(size).ok_or(PlanError::Overflow)?;
            buffers[b].offset = offset;
            arena_size = arena_size.max(end);
            placed.push(b);
        }
        // Alignment can leave the greedy placement longer than every buffer after the last
        // (a small buffer placed after a large one pads to the alignment, where in write
        // order the padding could fall elsewhere): then that order is the plan.
        let mut unshared = 0usize;
        let mut offsets = Vec::with_capacity(buffers.len());
        for buffer in &buffers {
            let offset = align_up(unshared, alignment).ok_or(PlanError::Overflow)?;
            offsets.push(offset);
            unshared = offset.checked_add(buffer.size).ok_or(PlanError::Overflow)?;
        }
        if unshared < arena_size {
            for (buffer, offset) in buffers.iter_mut().zip(offsets) {
                buffer.offset = offset;
            }
            arena_size = unshared;
        }

        let mut placements = vec![None; tensors.len()];
        for (i, buffer) in buffers.iter().enumerate() {
            for &id in &buffer.tensors {
                placements[id.index()] = Some(Placement {
                    buffer: i,
                    offset: buffer.offset,
                    size: buffer.size,
                });
            }
        }
        Ok(Self {
            alignment,
            arena_size,
            buffers,
            placements,
        })
    }

    /// The arena's size in bytes: the end of the highest buffer.
    pub fn arena_size(&self) -> usize {
        self.arena_size
    }

    /// The offset alignment it was planned with.
    pub fn alignment(&self) -> usize {
        self.alignment
    }

    /// The buffers, in the order their first tensor is written (graph inputs first).
    pub fn buffers(&self) -> &[PlannedBuffer] {
        &self.buffers
    }

    /// Where a tensor lies; `None` for constants and for tensors nothing uses.
    pub fn placement(&self, id: TensorId) -> Option<Placement> {
        self.placements.get(id.index()).copied().flatten()
    }

    /// The arena bytes without any reuse: every buffer after the last, aligned.
    pub fn unshared_size(&self) -> usize {
        self.buffers.iter().fold(0usize, |total, b| {
            align_up(total, self.alignment)
                .and_then(|t| t.checked_add(b.size))
                .unwrap_or(usize::MAX)
        })
    }
}

/// `n` rounded up to a multiple of `alignment` (a power of two), `None` on overflow.
fn align_up(n: usize, alignment: usize) -> Option<usize> {
    Some(n.checked_add(alignment - 1)? & !(alignment - 1))
}
