//! Which dispatches of a static program become direct calls
//! ([`hal_local::direct`]), and the typed statics that hold them.
//!
//! A dispatch is called directly where its kernel is one of hal-local's int8 weighted ops
//! (convolution, depthwise convolution, fully connected), the build links hal-local's own
//! kernel for it (on an Armv7E-M core, the tuned kernel alone), it runs as one workgroup
//! and its words decode. Its parameters become a literal of their type, so nothing is
//! decoded at run time; every other dispatch stays a `Step::Dispatch` over its words.

use ember_kernels::conv2d::Conv2dS8;
use ember_kernels::depthwise_conv2d::DepthwiseConv2dS8;
use ember_kernels::fully_connected::FullyConnectedS8;
use ember_kernels::{KernelParams, Words};
use hal_local::direct::{Call, WeightedS8, WeightedS8Params};
use hal_local::program::{Failure, Span};

use crate::program::{PlannedStep, ProgramPlan};

/// The kernels a dispatch of which may become a direct call.
pub(crate) const DIRECT_KERNELS: [&str; 3] = [
    Conv2dS8::KERNEL,
    DepthwiseConv2dS8::KERNEL,
    FullyConnectedS8::KERNEL,
];

/// A direct call's parameters, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Params {
    Conv2d(Conv2dS8),
    Depthwise(DepthwiseConv2dS8),
    FullyConnected(FullyConnectedS8),
}

/// A dispatch planned as a direct call: what the generated static holds, and a call the
/// host runs (`ProgramPlan::run_direct`) through the same `hal_local::direct` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlannedCall {
    params: Params,
    reads: [Span; 5],
    output: Span,
    scratch: Span,
}

/// A direct call as generated code writes it.
pub(crate) struct DirectCall {
    /// The parameters' type, a path.
    pub(crate) params_type: String,
    /// The parameters' literal.
    pub(crate) params: String,
    /// The call's type.
    pub(crate) call_type: String,
    /// The call's initializer, given the name of the parameters' static.
    pub(crate) call: Box<dyn Fn(&str) -> String>,
}

/// A static program's direct calls as generated code: the statics, and which static each
/// step that is a call points to.
pub(crate) struct Rendered {
    /// The `PARAMS_n` and `CALL_n` statics, one per line.
    pub(crate) items: String,
    /// `(step, n)`: step `step` is `Step::Call(&CALL_n)`.
    pub(crate) calls: Vec<(usize, usize)>,
}

/// The direct calls of `program`'s dispatches, `direct[e]` naming executable `e`'s kernel
/// where the firmware may call it directly; `span` renders a span. Calls with the same
/// parameters (the bands of a patch-based stage) share one static of them, and the same
/// calls one static.
pub(crate) fn render(
    program: &ProgramPlan,
    direct: &[Option<&str>],
    span: impl Fn(&Span) -> String + Copy,
) -> Rendered {
    let mut items = String::new();
    let mut calls = Vec::new();
    let mut params_held: Vec<String> = Vec::new();
    let mut calls_held: Vec<String> = Vec::new();
    for (index, step) in program.steps.iter().enumerate() {
        let PlannedStep::Dispatch {
            executable,
            workgroups,
            constants,
            bindings,
            scratch,
        } = step
        else {
            continue;
        };
        let Some(kernel) = direct.get(usize::from(*executable)).copied().flatten() else {
            continue;
        };
        let Some(planned) = plan(kernel, *workgroups, constants, bindings, *scratch) else {
            continue;
        };
        let call = planned.literal(span);
        let params = held(
            &mut params_held,
            call.params.clone(),
            |n, value| format!("static PARAMS_{n}: {} = {value};\n", call.params_type),
            &mut items,
        );
        let value = (call.call)(&format!("PARAMS_{params}"));
        let held_call = held(
            &mut calls_held,
            value,
            |n, value| {
                format!(
                "/// A `{kernel}` of the static program, called directly.\nstatic CALL_{n}: {} = {value};\n",
                call.call_type
            )
            },
            &mut items,
        );
        calls.push((index, held_call));
    }
    Rendered { items, calls }
}

/// The index of `value` in `held`, appending it (and its item, written by `item` from its
/// index and value, to `items`) where it is new.
fn held(
    held: &mut Vec<String>,
    value: String,
    item: impl Fn(usize, &str) -> String,
    items: &mut String,
) -> usize {
    if let Some(at) = held.iter().position(|h| *h == value) {
        return at;
    }
    items.push_str(&item(held.len(), &value));
    held.push(value);
    held.len() - 1
}

/// The direct call for a dispatch of `kernel` with `constants`, `bindings` and `scratch`
/// over `workgroups`; `None` where it stays a dispatch.
pub(crate) fn plan(
    kernel: &str,
    workgroups: [u32; 3],
    constants: &[u32],
    bindings: &[Span],
    scratch: Span,
) -> Option<PlannedCall> {
    let &[input, filter, bias, multipliers, shifts, output] = bindings else {
        return None;
    };
    if workgroups != [1, 1, 1] {
        return None;
    }
    let words = &mut Words::new(constants);
    let params = match kernel {
        Conv2dS8::KERNEL => Params::Conv2d(Conv2dS8::decode(words).ok()?),
        DepthwiseConv2dS8::KERNEL => Params::Depthwise(DepthwiseConv2dS8::decode(words).ok()?),
        FullyConnectedS8::KERNEL => Params::FullyConnected(FullyConnectedS8::decode(words).ok()?),
        _ => return None,
    };
    Some(PlannedCall {
        params,
        reads: [input, filter, bias, multipliers, shifts],
        output,
        scratch,
    })
}

impl PlannedCall {
    /// The call as generated code writes it, `span` rendering a span.
    pub(crate) fn literal(&self, span: impl Fn(&Span) -> String) -> DirectCall {
        let (name, params) = match &self.params {
            Params::Conv2d(p) => ("Conv2dS8", format!("{p:?}")),
            Params::Depthwise(p) => ("DepthwiseConv2dS8", format!("{p:?}")),
            Params::FullyConnected(p) => ("FullyConnectedS8", format!("{p:?}")),
        };
        let reads = self.reads.iter().map(&span).collect::<Vec<_>>().join(", ");
        let (output, scratch) = (span(&self.output), span(&self.scratch));
        let params_type = format!("::hal_local::direct::params::{name}");
        DirectCall {
            call_type: format!("::hal_local::direct::WeightedS8<'static, {params_type}>"),
            params: format!("{{ use ::hal_local::direct::params::*; {params} }}"),
            params_type,
            call: Box::new(move |params_static| {
                format!(
                    "{{ use ::hal_local::program::Span as S; ::hal_local::direct::WeightedS8 {{ \
                     params: &{params_static}, reads: [{reads}], output: {output}, scratch: {scratch} }} }}"
                )
            }),
        }
    }
}

impl Call for PlannedCall {
    fn call(&self, arena: &mut [u8], pool: &[u8], run: bool) -> Result<(), Failure> {
        match &self.params {
            Params::Conv2d(params) => self.with(params).call(arena, pool, run),
            Params::Depthwise(params) => self.with(params).call(arena, pool, run),
            Params::FullyConnected(params) => self.with(params).call(arena, pool, run),
        }
    }
}

impl PlannedCall {
    /// The call as hal-local makes it, over `params`.
    fn with<'p, P: WeightedS8Params>(&self, params: &'p P) -> WeightedS8<'p, P> {
        WeightedS8 {
            params,
            reads: self.reads,
            output: self.output,
            scratch: self.scratch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ember_kernels::fully_connected::FullyConnectedShape;

    fn span(s: &Span) -> String {
        format!("S::arena({}, {})", s.offset, s.length)
    }

    #[test]
    fn a_fully_connected_dispatch_becomes_its_typed_literal() {
        let params = FullyConnectedS8 {
            shape: FullyConnectedShape {
                batches: 1,
                accum_depth: 3,
                output_depth: 2,
                has_bias: true,
            },
            input_offset: 5,
            filter_offset: 0,
            output_offset: -3,
            act_min: -128,
            act_max: 127,
            per_channel: false,
        };
        let mut words = Vec::new();
        params.encode(&mut words);
        let bindings = [Span::arena(0, 4); 6];
        let direct = plan(
            FullyConnectedS8::KERNEL,
            [1, 1, 1],
            &words,
            &bindings,
            Span::NONE,
        )
        .unwrap()
        .literal(span);
        assert_eq!(
            direct.call_type,
            "::hal_local::direct::WeightedS8<'static, ::hal_local::direct::params::FullyConnectedS8>"
        );
        assert!(direct.params.contains(
            "FullyConnectedS8 { shape: FullyConnectedShape { batches: 1, accum_depth: 3, \
             output_depth: 2, has_bias: true }, input_offset: 5, filter_offset: 0, \
             output_offset: -3, act_min: -128, act_max: 127, per_channel: false }"
        ));
        // Several workgroups, other kernels, words that do not decode: a dispatch still.
        let stays = |kernel, workgroups, words: &[u32]| {
            plan(kernel, workgroups, words, &bindings, Span::NONE).is_none()
        };
        assert!(stays(FullyConnectedS8::KERNEL, [2, 1, 1], &words));
        assert!(stays("add_s8", [1, 1, 1], &words));
        assert!(stays(FullyConnectedS8::KERNEL, [1, 1, 1], &words[..3]));
    }
}
