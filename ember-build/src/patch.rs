//! Patch-based execution: a chain of convolutions computed a band of rows at a time, so
//! the activations between its layers never exist whole.
//!
//! A *stage* is a run of consecutive dispatches of convolution kernels (CONV_2D and
//! DEPTHWISE_CONV_2D, int8 and float, one batch) and int8 ADDs of two same-shaped tensors,
//! each reading the whole of the value the one before writes, which nothing else uses. Its
//! first input and its last output stay whole values, and so does an ADD's other input (a
//! residual block's skip connection), read row by row as the band reaches it. Each value
//! between two of its layers becomes a buffer of a few full-width rows — a patch: the rows
//! of an NHWC tensor are contiguous, so every patch is one span, and each layer runs as its
//! ordinary dispatch over it, with the input and output heights and the rows of padding
//! above rewritten.
//!
//! The stage runs band by band, `band_rows` rows of its output at a time. Each layer
//! computes only rows no band has computed yet and keeps the rows the next band still
//! reads, moved to the top of its buffer. No output row is computed twice, so the stage
//! costs no extra multiply-adds, only those moves and more dispatches; every output
//! element is computed by the same kernel from the same inputs as in the whole layer, so
//! the outputs are identical.

use crate::program::{Listing, Op, Place, Ref};
use ember_kernels::add::AddS8;
use ember_kernels::conv2d::{Conv2dF32, Conv2dS8};
use ember_kernels::depthwise_conv2d::{DepthwiseConv2dF32, DepthwiseConv2dS8};
use ember_kernels::{KernelParams, Words};
use std::ops::Range;

/// Band heights tried, tallest first (at equal arena the tallest band runs fewest steps).
const BAND_ROWS: [usize; 4] = [8, 4, 2, 1];

/// The patch-based stage a program runs, and what it costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchStage {
    /// The function's step (barriers counted) of the stage's first layer.
    pub first_step: usize,
    /// Each layer's kernel, in order.
    pub kernels: Vec<String>,
    /// Output rows of the last layer each band computes.
    pub band_rows: usize,
    /// Bands.
    pub bands: usize,
    /// Steps the stage runs (dispatches and moves), against one per layer whole.
    pub steps: usize,
    /// Bytes the stage moves per inference, keeping rows for the next band.
    pub moved_bytes: u64,
    /// Multiply-adds computed beyond the whole layers' (0: no row is computed twice).
    pub extra_multiply_adds: u64,
    /// The program's arena with every layer whole.
    pub plain_arena_bytes: u64,
    /// The program's arena with this stage and those chosen before it.
    pub arena_bytes: u64,
}

impl std::fmt::Display for PatchStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "patch-based stage of {} layers from step {} ({}): {} bands of {} output rows, \
             {} steps for {}, {} extra multiply-adds, {} bytes moved per inference; arena {} \
             bytes (plain {})",
            self.kernels.len(),
            self.first_step,
            self.kernels.join(", "),
            self.bands,
            self.band_rows,
            self.steps,
            self.kernels.len(),
            self.extra_multiply_adds,
            self.moved_bytes,
            self.arena_bytes,
            self.plain_arena_bytes,
        )
    }
}

/// A listing with one stage run patch by patch.
pub(crate) struct Candidate {
    pub listing: Listing,
    /// The stage's ops in the rewritten listing.
    pub ops: Range<usize>,
    pub stage: PatchStage,
}

/// Every stage worth trying in `listing` (each chain from its first layer to each later
/// one, in each band height), rewritten.
pub(crate) fn candidates(listing: &Listing, kernels: &[String]) -> Vec<Candidate> {
    let layers: Vec<Option<Layer>> = (0..listing.ops.len())
        .map(|at| Layer::of(listing, kernels, at))
        .collect();
    let mut uses = vec![0usize; listing.values.len()];
    for op in &listing.ops {
        for value in op.operands().iter().filter_map(Ref::value) {
            uses[value] += 1;
        }
    }
    let first_transient = listing.arguments + listing.results;
    // The binding through which layer `at + 1` continues a chain through layer `at`.
    let links = |at: usize| -> Option<usize> {
        let (Some(Some(this)), Some(Some(next))) = (layers.get(at), layers.get(at + 1)) else {
            return None;
        };
        let continues = this.output >= first_transient
            && uses[this.output] == 2
            && this.rows.output_rows == next.rows.input_rows
            && this.rows.output_row_bytes == next.rows.input_row_bytes;
        let through: Vec<usize> = next
            .inputs
            .iter()
            .copied()
            .filter(|&b| next.bindings[b].value() == Some(this.output))
            .collect();
        match through[..] {
            [binding] if continues => Some(binding),
            _ => None,
        }
    };
    let mut found = Vec::new();
    let mut at = 0;
    while at < listing.ops.len() {
        if layers[at].is_none() {
            at += 1;
            continue;
        }
        // Each layer with the binding it reads the one before through (the first layer's
        // first row-read binding: its chain input).
        let mut chain_of = vec![(at, layers[at].as_ref().map_or(0, |l| l.inputs[0]))];
        let mut last = at;
        while let Some(binding) = links(last) {
            last += 1;
            chain_of.push((last, binding));
        }
        for end in at + 1..=last {
            let chain: Vec<(Layer, usize)> = chain_of[..=end - at]
                .iter()
                .filter_map(|&(i, binding)| Some((layers[i].clone()?, binding)))
                .collect();
            for band_rows in BAND_ROWS {
                if let Some(candidate) = rewrite(listing, kernels, &chain, band_rows) {
                    found.push(candidate);
                }
            }
        }
        at = last + 1;
    }
    found
}

/// A dispatch a stage can run patch by patch: a convolution, or an ADD.
#[derive(Debug, Clone)]
struct Layer {
    /// Its index in the listing's ops.
    at: usize,
    executable: u16,
    workgroups: [u32; 3],
    bindings: Vec<Ref>,
    /// Which binding it writes.
    output_binding: usize,
    params: Params,
    rows: Rows,
    /// The bindings it reads row by row, each a whole value of `rows.input_rows` rows: a
    /// convolution's input, an ADD's two.
    inputs: Vec<usize>,
    /// The value it writes, whole.
    output: usize,
}

impl Layer {
    /// Op `at` of `listing`, where it is a convolution or ADD over one batch reading and
    /// writing whole values and nothing else but constants.
    fn of(listing: &Listing, kernels: &[String], at: usize) -> Option<Self> {
        let Op::Dispatch {
            executable,
            workgroups,
            constants,
            bindings,
        } = &listing.ops[at]
        else {
            return None;
        };
        let kernel = kernels.get(usize::from(*executable))?;
        let params = Params::decode(kernel, constants)?;
        let rows = params.rows()?;
        let output_binding = params.output_binding();
        if bindings.len() <= output_binding {
            return None;
        }
        let whole = |binding: &Ref, bytes: usize| -> Option<usize> {
            let value = binding.value()?;
            (binding.offset == 0
                && binding.length == listing.values[value]
                && binding.length == bytes as u64)
                .then_some(value)
        };
        let inputs = params.row_inputs();
        let mut read = Vec::new();
        for &binding in inputs {
            read.push(whole(
                bindings.get(binding)?,
                rows.input_rows * rows.input_row_bytes,
            )?);
        }
        let output = whole(
            &bindings[output_binding],
            rows.output_rows * rows.output_row_bytes,
        )?;
        let constants_only = bindings.iter().enumerate().all(|(n, b)| {
            inputs.contains(&n) || n == output_binding || matches!(b.place, Place::Pool(_))
        });
        (constants_only && !read.contains(&output)).then(|| Self {
            at,
            executable: *executable,
            workgroups: *workgroups,
            bindings: bindings.clone(),
            output_binding,
            params,
            rows,
            inputs: inputs.to_vec(),
            output,
        })
    }
}

/// The parameters of a layer, of the kernels a stage takes.
#[derive(Debug, Clone, Copy)]
enum Params {
    ConvS8(Conv2dS8),
    ConvF32(Conv2dF32),
    DepthwiseS8(DepthwiseConv2dS8),
    DepthwiseF32(DepthwiseConv2dF32),
    /// Two inputs of one shape (no broadcast).
    AddS8(AddS8),
}

fn decoded<P: KernelParams>(constants: &[u32]) -> Option<P> {
    P::decode(&mut Words::new(constants)).ok()
}

fn encoded<P: KernelParams>(params: &P) -> Vec<u32> {
    let mut words = Vec::new();
    params.encode(&mut words);
    words
}

impl Params {
    fn decode(kernel: &str, constants: &[u32]) -> Option<Self> {
        Some(match kernel {
            Conv2dS8::KERNEL => Params::ConvS8(decoded(constants)?),
            Conv2dF32::KERNEL => Params::ConvF32(decoded(constants)?),
            DepthwiseConv2dS8::KERNEL => Params::DepthwiseS8(decoded(constants)?),
            DepthwiseConv2dF32::KERNEL => Params::DepthwiseF32(decoded(constants)?),
            AddS8::KERNEL => {
                let add: AddS8 = decoded(constants)?;
                (add.shape.input1 == add.shape.input2).then_some(Params::AddS8(add))?
            }
            _ => return None,
        })
    }

    /// The bindings it reads row by row.
    fn row_inputs(&self) -> &'static [usize] {
        match self {
            Params::AddS8(_) => &[0, 1],
            _ => &[0],
        }
    }

    fn output_binding(&self) -> usize {
        let bindings = match self {
            Params::ConvS8(_) => Conv2dS8::BINDINGS,
            Params::ConvF32(_) => Conv2dF32::BINDINGS,
            Params::DepthwiseS8(_) => DepthwiseConv2dS8::BINDINGS,
            Params::DepthwiseF32(_) => DepthwiseConv2dF32::BINDINGS,
            Params::AddS8(_) => AddS8::BINDINGS,
        };
        bindings.len() - 1
    }

    /// The rows it reads and writes; `None` over more than one batch.
    fn rows(&self) -> Option<Rows> {
        let element = match self {
            Params::ConvS8(_) | Params::DepthwiseS8(_) | Params::AddS8(_) => 1,
            Params::ConvF32(_) | Params::DepthwiseF32(_) => 4,
        };
        let rows = match self {
            Params::ConvS8(Conv2dS8 { shape, .. }) | Params::ConvF32(Conv2dF32 { shape, .. }) => {
                (shape.batches == 1).then(|| {
                    Rows::of_window(
                        (shape.input_height, shape.output_height),
                        shape.input_width * shape.input_depth * element,
                        shape.output_width * shape.output_depth * element,
                        &shape.window,
                        shape.filter_height,
                        shape.output_width
                            * shape.output_depth
                            * shape.filter_height
                            * shape.filter_width
                            * shape.filter_depth,
                    )
                })?
            }
            Params::DepthwiseS8(DepthwiseConv2dS8 { shape, .. })
            | Params::DepthwiseF32(DepthwiseConv2dF32 { shape, .. }) => {
                let output_depth = shape.input_depth * shape.depth_multiplier;
                (shape.batches == 1).then(|| {
                    Rows::of_window(
                        (shape.input_height, shape.output_height),
                        shape.input_width * shape.input_depth * element,
                        shape.output_width * output_depth * element,
                        &shape.window,
                        shape.filter_height,
                        shape.output_width
                            * output_depth
                            * shape.filter_height
                            * shape.filter_width,
                    )
                })?
            }
            // Dimensions outermost first, rank 6: `[.., batch, height, width, depth]`.
            Params::AddS8(AddS8 { shape, .. }) => {
                let dims = shape.input1;
                let row_bytes = dims[4] * dims[5];
                (dims[..3].iter().all(|&d| d == 1)).then_some(Rows {
                    input_rows: dims[3],
                    output_rows: dims[3],
                    input_row_bytes: row_bytes,
                    output_row_bytes: row_bytes,
                    stride: 1,
                    dilation: 1,
                    filter: 1,
                    pad: 0,
                    multiply_adds_per_row: 0,
                })?
            }
        };
        Some(rows)
    }

    /// The words of the same layer over `input_rows` rows of input, writing `output_rows`
    /// rows, with `pad` rows of padding above.
    fn with_rows(&self, input_rows: usize, output_rows: usize, pad: usize) -> Vec<u32> {
        macro_rules! rewritten {
            ($params:expr) => {{
                let mut params = *$params;
                params.shape.input_height = input_rows;
                params.shape.output_height = output_rows;
                params.shape.window.pad_height = pad;
                encoded(&params)
            }};
        }
        match self {
            Params::ConvS8(p) => rewritten!(p),
            Params::ConvF32(p) => rewritten!(p),
            Params::DepthwiseS8(p) => rewritten!(p),
            Params::DepthwiseF32(p) => rewritten!(p),
            Params::AddS8(add) => {
                let mut add = *add;
                add.shape.input1[3] = output_rows;
                add.shape.input2[3] = output_rows;
                encoded(&add)
            }
        }
    }
}

/// A layer's vertical geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rows {
    input_rows: usize,
    output_rows: usize,
    input_row_bytes: usize,
    output_row_bytes: usize,
    stride: usize,
    dilation: usize,
    filter: usize,
    /// Rows of padding above the input.
    pad: usize,
    multiply_adds_per_row: u64,
}

impl Rows {
    /// A sliding window's rows: `(input, output)` rows of the given bytes, the window's
    /// vertical stride, dilation and padding, a filter `filter` rows high, and the
    /// multiply-adds of one output row.
    fn of_window(
        (input_rows, output_rows): (usize, usize),
        input_row_bytes: usize,
        output_row_bytes: usize,
        window: &ember_kernels::padding::Window,
        filter: usize,
        multiply_adds_per_row: usize,
    ) -> Self {
        Self {
            input_rows,
            output_rows,
            input_row_bytes,
            output_row_bytes,
            stride: window.stride_height,
            dilation: window.dilation_height,
            filter,
            pad: window.pad_height,
            multiply_adds_per_row: multiply_adds_per_row as u64,
        }
    }

    /// The input rows output rows `out` (not empty) read: the window's taps, clamped to
    /// the input (taps outside it are padding).
    fn reads(&self, out: &Range<usize>) -> Range<usize> {
        let first = (out.start * self.stride).saturating_sub(self.pad);
        let reach = (out.end - 1) * self.stride + (self.filter - 1) * self.dilation + 1;
        let end = reach.saturating_sub(self.pad).min(self.input_rows);
        first..end.max(first)
    }
}

/// `listing` with `chain` run band by band, `band_rows` rows of its last output at a
/// time; `None` where a band would read no rows (a window wholly in padding).
fn rewrite(
    listing: &Listing,
    kernels: &[String],
    chain: &[(Layer, usize)],
    band_rows: usize,
) -> Option<Candidate> {
    // Each layer, with the binding it reads the layer before through.
    let (chain, throughs): (Vec<&Layer>, Vec<usize>) = chain
        .iter()
        .map(|(layer, binding)| (layer, *binding))
        .unzip();
    let layers = chain.len();
    let last = &chain[layers - 1];
    let mut values = listing.values.clone();
    // Buffer `m` holds rows of layer `m`'s output, for `m` below the last layer; the
    // whole values they replace are no longer used.
    let first_buffer = values.len();
    for layer in &chain[..layers - 1] {
        values[layer.output] = 0;
        values.push(0);
    }
    let layer_origin = |m: usize| listing.origins[chain[m].at];
    let mut held: Vec<Range<usize>> = vec![0..0; layers - 1];
    let mut capacity = vec![0usize; layers - 1];
    let mut computed_rows = vec![0usize; layers];
    let (mut stage_ops, mut stage_origins) = (Vec::new(), Vec::new());
    let mut moved_bytes = 0u64;
    let mut bands = 0;
    for band_start in (0..last.rows.output_rows).step_by(band_rows) {
        bands += 1;
        let band = band_start..(band_start + band_rows).min(last.rows.output_rows);
        // Backwards: the rows each layer computes now, and what its buffer holds after.
        let mut new = vec![0..0; layers];
        let mut after = held.clone();
        new[layers - 1] = band;
        for m in (0..layers - 1).rev() {
            if new[m + 1].is_empty() {
                continue;
            }
            let reads = chain[m + 1].rows.reads(&new[m + 1]);
            if reads.is_empty() || (!held[m].is_empty() && reads.start < held[m].start) {
                return None;
            }
            let from = if held[m].is_empty() {
                reads.start
            } else {
                reads.start.max(held[m].end)
            };
            new[m] = from.min(reads.end)..reads.end;
            after[m] = reads;
        }
        // Forwards: move the rows kept to the top of each buffer, then compute.
        for m in 0..layers {
            if new[m].is_empty() {
                continue;
            }
            let (layer, through) = (chain[m], throughs[m]);
            if m < layers - 1 {
                let row_bytes = layer.rows.output_row_bytes as u64;
                let kept = after[m].start..held[m].end.max(after[m].start);
                if !held[m].is_empty() && after[m].start > held[m].start && !kept.is_empty() {
                    let length = kept.len() as u64 * row_bytes;
                    let buffer = Place::Value(first_buffer + m);
                    stage_origins.push(layer_origin(m));
                    stage_ops.push(Op::Copy {
                        source: Ref {
                            place: buffer,
                            offset: (kept.start - held[m].start) as u64 * row_bytes,
                            length,
                        },
                        target: Ref {
                            place: buffer,
                            offset: 0,
                            length,
                        },
                    });
                    moved_bytes += length;
                }
                held[m] = after[m].clone();
                capacity[m] = capacity[m].max(held[m].len());
            }
            let reads = layer.rows.reads(&new[m]);
            if reads.is_empty() {
                return None;
            }
            let in_bytes = layer.rows.input_row_bytes as u64;
            let mut bindings = layer.bindings.clone();
            for &binding in &layer.inputs {
                bindings[binding] = if m > 0 && binding == through {
                    // The rows the layer before holds in its buffer.
                    let rows = &held[m - 1];
                    if reads.start < rows.start || reads.end > rows.end {
                        return None;
                    }
                    Ref {
                        place: Place::Value(first_buffer + m - 1),
                        offset: (reads.start - rows.start) as u64 * in_bytes,
                        length: reads.len() as u64 * in_bytes,
                    }
                } else {
                    // The stage's input, or an ADD's other input: rows of a whole value.
                    Ref {
                        offset: reads.start as u64 * in_bytes,
                        length: reads.len() as u64 * in_bytes,
                        ..layer.bindings[binding]
                    }
                };
            }
            let out_bytes = layer.rows.output_row_bytes as u64;
            let output = Ref {
                place: Place::Value(if m == layers - 1 {
                    layer.output
                } else {
                    first_buffer + m
                }),
                offset: if m == layers - 1 {
                    new[m].start as u64 * out_bytes
                } else {
                    (new[m].start - held[m].start) as u64 * out_bytes
                },
                length: new[m].len() as u64 * out_bytes,
            };
            // Rows of padding above the patch: the window's top row less the first row
            // read (0 except where the patch starts at the input's first row).
            let pad =
                (layer.rows.pad + reads.start).checked_sub(new[m].start * layer.rows.stride)?;
            bindings[layer.output_binding] = output;
            stage_origins.push(layer_origin(m));
            stage_ops.push(Op::Dispatch {
                executable: layer.executable,
                workgroups: layer.workgroups,
                constants: layer.params.with_rows(reads.len(), new[m].len(), pad),
                bindings,
            });
            computed_rows[m] += new[m].len();
        }
    }
    for (m, rows) in capacity.iter().enumerate() {
        values[first_buffer + m] = (rows * chain[m].rows.output_row_bytes) as u64;
    }
    let extra_multiply_adds = chain
        .iter()
        .zip(&computed_rows)
        .map(|(layer, &rows)| {
            rows.saturating_sub(layer.rows.output_rows) as u64 * layer.rows.multiply_adds_per_row
        })
        .sum();
    let (first, end) = (chain[0].at, last.at);
    let steps = stage_ops.len();
    let mut ops = listing.ops[..first].to_vec();
    let mut origins = listing.origins[..first].to_vec();
    origins.extend(stage_origins);
    ops.extend(stage_ops);
    ops.extend_from_slice(&listing.ops[end + 1..]);
    origins.extend_from_slice(&listing.origins[end + 1..]);
    Some(Candidate {
        listing: Listing {
            values,
            arguments: listing.arguments,
            results: listing.results,
            ops,
            origins,
        },
        ops: first..first + steps,
        stage: PatchStage {
            first_step: listing.origins[first],
            kernels: chain
                .iter()
                .map(|layer| kernels[usize::from(layer.executable)].clone())
                .collect(),
            band_rows,
            bands,
            steps,
            moved_bytes,
            extra_multiply_adds,
            plain_arena_bytes: 0,
            arena_bytes: 0,
        },
    })
}
