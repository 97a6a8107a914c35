//! FULLY_CONNECTED: TFLM's `reference_integer_ops::FullyConnected` (int8, per-tensor),
//! `FullyConnectedPerChannel` (int8, per-channel weights) and
//! `reference_ops::FullyConnected` (float).
//!
//! Layouts as TFLite: input `[batches, accum_depth]` (any shape whose flat size is that:
//! TFLM takes the batch count from the output), weights `[output_depth, accum_depth]`,
//! output `[batches, output_depth]`.
//!
//! Bindings of `fully_connected_s8` ([`FullyConnectedS8`]):
//! 0. input, `i8`, `batches * accum_depth`
//! 1. weights, `i8`, `output_depth * accum_depth`
//! 2. bias, `i32`, `output_depth` (not read, any length, where `has_bias` is false)
//! 3. multipliers, `i32`: `output_depth` of them where `per_channel`, else 1
//!    ([`FullyConnectedS8::per_tensor_multiplier`],
//!    [`per_channel_multipliers`](crate::conv2d::per_channel_multipliers))
//! 4. shifts, `i32`, as many as multipliers, each in `-31..=30`
//! 5. output, `i8`, `batches * output_depth`
//!
//! Bindings of `fully_connected_f32` ([`FullyConnectedF32`]): 0 input, 1 weights, 2 bias
//! (`output_depth`, or unread), 3 output, all `f32`.

#[cfg(any(ember_blocked, test))]
mod blocked;
#[cfg(any(ember_dsp, test))]
mod dsp;
#[cfg(all(
    any(ember_blocked, test),
    target_arch = "aarch64",
    target_feature = "neon"
))]
mod neon;
mod spec;
#[cfg(any(test, feature = "tuned-check"))]
pub(crate) mod tuned_check;

pub use spec::{FullyConnectedF32, FullyConnectedS8, FullyConnectedShape};

use crate::quant::{dot_s8, OutputStageS8};
use crate::shape::{self, clamp_f32};
use hal_core::kernel::KernelError;

impl FullyConnectedS8 {
    /// Runs the layer. `bias` is ignored where `has_bias` is false. On a core with a tuned
    /// kernel for it (the folder's `dsp.rs` on Armv7E-M's DSP extension, `blocked.rs` on the
    /// register-blocked cores) that kernel runs, bit for bit
    /// [`run_portable`](Self::run_portable)'s result.
    pub fn run(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_with::<true, true, true>(input, weights, bias, multipliers, shifts, output)
    }

    /// [`run`](Self::run) with only the kernel this core runs for parameters the build has
    /// checked ([`takes_tuned`](Self::takes_tuned)): on a core with a tuned kernel, that kernel alone,
    /// parameters it does not take refused rather than run through the portable loops
    /// (which a caller that needs no other is then linked without); on other cores the
    /// portable loops.
    pub fn run_tuned(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        #[cfg(any(ember_tuned, test))]
        const PORTABLE: bool = false;
        #[cfg(not(any(ember_tuned, test)))]
        const PORTABLE: bool = true;
        self.run_with::<true, true, PORTABLE>(input, weights, bias, multipliers, shifts, output)
    }

    /// Whether the Cortex-M4 kernel (`dsp.rs`) takes these parameters: an input offset
    /// inside 16-bit lanes, and no filter offset (per-channel weights have none).
    pub fn tuned(&self) -> bool {
        crate::quant::narrow_offset(self.input_offset).is_some()
            && (self.per_channel || self.filter_offset == 0)
    }

    /// Whether the register-blocked kernel (`blocked.rs`) takes these parameters: no
    /// filter offset (per-channel weights have none).
    pub fn takes_blocked(&self) -> bool {
        self.per_channel || self.filter_offset == 0
    }

    /// Whether `variant`'s kernel takes these parameters: the Cortex-M4's where
    /// [`tuned`](Self::tuned), the register-blocked one's where
    /// [`takes_blocked`](Self::takes_blocked).
    pub fn takes_tuned(&self, variant: crate::TunedVariant) -> bool {
        match variant {
            crate::TunedVariant::Dsp => self.tuned(),
            crate::TunedVariant::Blocked => self.takes_blocked(),
        }
    }

    /// Runs the layer with the portable loops only: the reference tuned kernels are
    /// checked against.
    pub fn run_portable(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_with::<false, false, true>(input, weights, bias, multipliers, shifts, output)
    }

    /// The register-blocked kernel alone, parameters it does not take refused: checked
    /// against [`run_portable`](Self::run_portable) on every core that builds it.
    #[cfg(all(any(ember_blocked, test), any(test, feature = "tuned-check")))]
    pub(crate) fn run_blocked(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.run_with::<false, true, false>(input, weights, bias, multipliers, shifts, output)
    }

    /// [`run`](Self::run), with the Cortex-M4 kernel (`DSP`) and the register-blocked one
    /// (`BLOCKED`) allowed or not, where the core builds them; where they decline, the
    /// portable loops run if `PORTABLE`, and the dispatch is refused if not.
    fn run_with<const DSP: bool, const BLOCKED: bool, const PORTABLE: bool>(
        &self,
        input: &[i8],
        weights: &[i8],
        bias: &[i32],
        multipliers: &[i32],
        shifts: &[i32],
        output: &mut [i8],
    ) -> Result<(), KernelError> {
        self.check(&[
            input.len(),
            weights.len(),
            bias.len() * 4,
            multipliers.len() * 4,
            shifts.len() * 4,
            output.len(),
        ])?;
        shape::shifts_ok(&shifts[..self.channels()])?;
        let FullyConnectedShape {
            batches,
            accum_depth: n,
            output_depth: od,
            has_bias,
        } = self.shape;
        let stage = OutputStageS8 {
            bias,
            has_bias,
            multipliers,
            shifts,
            per_channel: self.per_channel,
            output_offset: self.output_offset,
            act_min: self.act_min,
            act_max: self.act_max,
        };
        #[cfg(any(ember_dsp, test))]
        if DSP && dsp::run(self, input, weights, &stage, output) {
            return Ok(());
        }
        #[cfg(any(ember_blocked, test))]
        if BLOCKED && blocked::run(self, input, weights, &stage, output) {
            return Ok(());
        }
        if !PORTABLE {
            return Err(KernelError::Shape(
                "no tuned kernel for these parameters (the build chose the tuned kernel alone)",
            ));
        }
        let in_off = self.input_offset;
        let f_off = if self.per_channel {
            0
        } else {
            self.filter_offset
        };
        for b in 0..batches {
            let row = &input[b * n..(b + 1) * n];
            for oc in 0..od {
                let w = &weights[oc * n..(oc + 1) * n];
                let mut acc: i32 = 0;
                if in_off == 0 && f_off == 0 {
                    // The importer folds the input offset into the bias where it can.
                    acc = dot_s8(row, w);
                } else {
                    for (&x, &f) in row.iter().zip(w) {
                        let x = i32::from(x).wrapping_add(in_off);
                        let f = i32::from(f).wrapping_add(f_off);
                        acc = acc.wrapping_add(f.wrapping_mul(x));
                    }
                }
                output[b * od + oc] = stage.apply(oc, acc);
            }
        }
        Ok(())
    }
}

impl FullyConnectedF32 {
    /// Runs the layer. `bias` is ignored where `has_bias` is false.
    pub fn run(
        &self,
        input: &[f32],
        weights: &[f32],
        bias: &[f32],
        output: &mut [f32],
    ) -> Result<(), KernelError> {
        self.check(&[
            input.len() * 4,
            weights.len() * 4,
            bias.len() * 4,
            output.len() * 4,
        ])?;
        let FullyConnectedShape {
            batches,
            accum_depth: n,
            output_depth: od,
            has_bias,
        } = self.shape;
        for b in 0..batches {
            let row = &input[b * n..(b + 1) * n];
            for oc in 0..od {
                let w = &weights[oc * n..(oc + 1) * n];
                let mut total = 0.0f32;
                for (&x, &f) in row.iter().zip(w) {
                    total += x * f;
                }
                let bv = if has_bias { bias[oc] } else { 0.0 };
                output[b * od + oc] = clamp_f32(total + bv, self.act_min, self.act_max);
            }
        }
        Ok(())
    }
}
