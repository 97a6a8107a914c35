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
use hal_local::program::Span;

/// The kernels a dispatch of which may become a direct call.
pub(crate) const DIRECT_KERNELS: [&str; 3] = [
    Conv2dS8::KERNEL,
    DepthwiseConv2dS8::KERNEL,
    FullyConnectedS8::KERNEL,
];

/// A direct call as generated code writes it.
pub(crate) struct DirectCall {
    /// The parameters' type, a path.
    pub(crate) params_type: String,
    /// The parameters' literal.
    pub(crate) params: String,
    /// The call's type, given the name of the parameters' static.
    pub(crate) call_type: String,
    /// The call's initializer, `PARAMS` standing for the parameters' static.
    pub(crate) call: String,
}

/// The direct call for a dispatch of `kernel` with `constants`, `bindings` and `scratch`
/// over `workgroups`; `None` where it stays a dispatch. `span` renders a span as the
/// generated code writes it.
pub(crate) fn call(
    kernel: &str,
    workgroups: [u32; 3],
    constants: &[u32],
    bindings: &[Span],
    scratch: Span,
    span: impl Fn(&Span) -> String,
) -> Option<DirectCall> {
    let [input, filter, bias, multipliers, shifts, output] = bindings else {
        return None;
    };
    if workgroups != [1, 1, 1] {
        return None;
    }
    let words = &mut Words::new(constants);
    let (name, params) = match kernel {
        Conv2dS8::KERNEL => ("Conv2dS8", format!("{:?}", Conv2dS8::decode(words).ok()?)),
        DepthwiseConv2dS8::KERNEL => (
            "DepthwiseConv2dS8",
            format!("{:?}", DepthwiseConv2dS8::decode(words).ok()?),
        ),
        FullyConnectedS8::KERNEL => (
            "FullyConnectedS8",
            format!("{:?}", FullyConnectedS8::decode(words).ok()?),
        ),
        _ => return None,
    };
    let reads = [input, filter, bias, multipliers, shifts]
        .map(&span)
        .join(", ");
    let params_type = format!("::hal_local::direct::params::{name}");
    Some(DirectCall {
        call_type: format!("::hal_local::direct::WeightedS8<'static, {params_type}>"),
        params: format!("{{ use ::hal_local::direct::params::*; {params} }}"),
        params_type,
        call: format!(
            "{{ use ::hal_local::program::Span as S; ::hal_local::direct::WeightedS8 {{ \
             params: &PARAMS, reads: [{reads}], output: {}, scratch: {} }} }}",
            span(output),
            span(&scratch)
        ),
    })
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
        let direct = call(
            FullyConnectedS8::KERNEL,
            [1, 1, 1],
            &words,
            &bindings,
            Span::NONE,
            span,
        )
        .unwrap();
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
            call(kernel, workgroups, words, &bindings, Span::NONE, span).is_none()
        };
        assert!(stays(FullyConnectedS8::KERNEL, [2, 1, 1], &words));
        assert!(stays("add_s8", [1, 1, 1], &words));
        assert!(stays(FullyConnectedS8::KERNEL, [1, 1, 1], &words[..3]));
    }
}
