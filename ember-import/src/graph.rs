//! The validated graph: tensors, ops in execution order, inputs and outputs.

use crate::{MemoryPlan, Op, PlanError, Tensor, TensorId};

/// A TFLite model's one subgraph, parsed and validated: every index in range, every op
/// supported with options and shapes that agree, every tensor read by an op written before
/// it (or a graph input, or a constant), none written twice. Constants borrow their bytes
/// from the file (`'a`).
///
/// Only [`Graph::parse`] makes one, so what these accessors return always holds together.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph<'a> {
    tensors: Vec<Tensor<'a>>,
    ops: Vec<Op>,
    inputs: Vec<TensorId>,
    outputs: Vec<TensorId>,
}

impl<'a> Graph<'a> {
    pub(crate) fn new(
        tensors: Vec<Tensor<'a>>,
        ops: Vec<Op>,
        inputs: Vec<TensorId>,
        outputs: Vec<TensorId>,
    ) -> Self {
        Self {
            tensors,
            ops,
            inputs,
            outputs,
        }
    }

    /// Every tensor of the subgraph, indexed by [`TensorId`].
    pub fn tensors(&self) -> &[Tensor<'a>] {
        &self.tensors
    }

    /// One tensor.
    ///
    /// # Panics
    ///
    /// If `id` is not from this graph (past its tensor list).
    pub fn tensor(&self, id: TensorId) -> &Tensor<'a> {
        &self.tensors[id.index()]
    }

    /// The ops, in execution order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The graph's inputs, in the file's order.
    pub fn inputs(&self) -> &[TensorId] {
        &self.inputs
    }

    /// The graph's outputs, in the file's order.
    pub fn outputs(&self) -> &[TensorId] {
        &self.outputs
    }

    /// Total bytes of constant data over all constant tensors.
    pub fn constant_bytes(&self) -> usize {
        self.tensors
            .iter()
            .filter_map(|t| t.data)
            .map(<[u8]>::len)
            .sum()
    }

    /// The static memory plan of the non-constant tensors, each offset a multiple of
    /// `alignment` ([`DEFAULT_ALIGNMENT`](crate::DEFAULT_ALIGNMENT) is 16).
    pub fn plan(&self, alignment: usize) -> Result<MemoryPlan, PlanError> {
        MemoryPlan::new(self, alignment)
    }
}
