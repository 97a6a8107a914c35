//! The choices a lowering makes for the core its module runs on.

/// Layout choices of a lowering, by target. The default is the host's: every choice made
/// for the portable kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Int8 CONV_2D filters stay TFLite's OHWI (`[out][h][w][in]`: each output channel's
    /// products contiguous, as dot-product kernels such as the Cortex-M DSP path's SMLAD
    /// loops read them) rather than being transposed to HWIO at import (every output
    /// channel of one tap together, which the portable kernels vectorize on a host). Float
    /// filters and grouped convolutions are laid out the same either way. An int8
    /// DEPTHWISE_CONV_2D over one input channel (a first layer's) then lowers to that
    /// convolution, its filter transposed from `[1, h, w, M]` to OHWI `[M, h, w, 1]`.
    pub int8_conv_ohwi: bool,
    /// The module runs only where steps run one after another in order (the local driver,
    /// as firmware links it): no barrier between consecutive steps, so its recorded command
    /// buffer takes no room for them. Otherwise (the default) a barrier precedes every step
    /// but the first, as a device that overlaps dispatches (a GPU) needs.
    pub in_order: bool,
    /// A DEPTHWISE_CONV_2D whose int8 result only the 1×1 CONV_2D after it reads runs with
    /// it as one step, `separable_conv2d_s8`: one dispatch, no barrier between the layers
    /// and no middle tensor in the arena. For a GPU, where each dependent dispatch costs
    /// microseconds ([`for_gpu`](Self::for_gpu)); on a CPU the fused kernel is a plain loop,
    /// slower than the two tuned kernels apart (and the Cortex-M DSP path has one for each).
    pub fuse_separable: bool,
}

impl LowerOptions {
    /// The options for a module that runs on Rust target `target` (a target triple, as
    /// Cargo's `TARGET`): OHWI int8 convolution filters on `thumbv7em-*` (Cortex-M4 and
    /// Cortex-M7, whose DSP extension `ember-kernels`' tuned convolution uses), the default
    /// elsewhere; [`in_order`](Self::in_order) on bare-metal targets (`*-none-*`), whose
    /// firmware runs the local driver only.
    pub fn for_target(target: &str) -> Self {
        Self {
            int8_conv_ohwi: target.starts_with("thumbv7em"),
            in_order: target.contains("-none"),
            fuse_separable: false,
        }
    }

    /// The options for a module that runs on a GPU: the host's, with
    /// [`fuse_separable`](Self::fuse_separable).
    pub fn for_gpu() -> Self {
        Self {
            fuse_separable: true,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsp_cores_keep_ohwi() {
        assert!(LowerOptions::for_target("thumbv7em-none-eabihf").int8_conv_ohwi);
        assert!(LowerOptions::for_target("thumbv7em-none-eabi").int8_conv_ohwi);
        assert!(!LowerOptions::for_target("thumbv7m-none-eabi").int8_conv_ohwi);
        // Firmware runs steps in order; a host module may run on a GPU.
        assert!(LowerOptions::for_target("thumbv7m-none-eabi").in_order);
        assert!(LowerOptions::for_target("riscv32imac-unknown-none-elf").in_order);
        assert!(LowerOptions::for_target("aarch64-unknown-none").in_order);
        assert_eq!(
            LowerOptions::for_target("x86_64-unknown-linux-gnu"),
            LowerOptions::default()
        );
    }
}
