//! Fixed-point arithmetic of TensorFlow Lite Micro's integer kernels (gemmlowp's rounding
//! rules, TFLite's `MultiplyByQuantizedMultiplier` without `TFLITE_SINGLE_ROUNDING`, which
//! is TFLM's default), and the host-side computation of a real multiplier's fixed-point form.

/// `(a * b * 2) >> 32` rounded to nearest (gemmlowp's nudge: positive ties up, negative
/// ties toward zero), saturating the one
/// overflowing case (`i32::MIN * i32::MIN`).
#[inline(always)]
pub fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == b && a == i32::MIN {
        return i32::MAX;
    }
    let ab = i64::from(a) * i64::from(b);
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    // C++'s division truncates toward zero, as Rust's does.
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// `x / 2^exponent` rounded to nearest, ties away from zero; `exponent` in `0..=31`.
#[inline(always)]
pub fn rounding_divide_by_pot(x: i32, exponent: i32) -> i32 {
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> exponent) + i32::from(remainder > threshold)
}

/// `x * multiplier * 2^shift` with `multiplier` a Q31 fraction in `[0.5, 1)` (or 0), as
/// TFLite's `MultiplyByQuantizedMultiplier`: a left shift before the multiply, a rounding
/// right shift after it.
#[inline(always)]
pub fn multiply_by_quantized_multiplier(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = shift.max(0);
    let right = (-shift).max(0);
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x.wrapping_mul(1 << left), multiplier),
        right,
    )
}

/// `Σ a[i] * b[i]` over the shorter length, in wrapping int32 (as TFLM accumulates): the
/// int8 inner loop of the weighted ops. Each product fits 16 bits and a pair of them 32,
/// which lets the compiler use 16-bit multiply-adds (SSE2 `pmaddwd`, NEON `smlal`).
#[inline(always)]
pub fn dot_s8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).fold(0i32, |acc, (&x, &w)| {
        acc.wrapping_add(i32::from(x) * i32::from(w))
    })
}

/// An int8 input offset (`-input_zero_point`, in `-127..=128`) as `i16`: then
/// `(x + offset) * w` fits 16 bits for every int8 `x` and `w`, and the weighted ops form
/// their products in 16-bit lanes, as wide as SIMD multiplies go without SSE4.1. `None`
/// for an offset outside that range (the kernels then multiply in 32 bits).
#[inline]
pub fn narrow_offset(input_offset: i32) -> Option<i16> {
    i16::try_from(input_offset)
        .ok()
        .filter(|o| (-127..=128).contains(o))
}

/// An int8 weighted op's output stage, per output channel `oc`: the bias (where the op has
/// one), TFLM's per-channel (or per-tensor) requantization, the output zero point and the
/// clamp.
#[derive(Clone, Copy)]
pub(crate) struct OutputStageS8<'a> {
    /// Binding 2, read where `has_bias`.
    pub(crate) bias: &'a [i32],
    /// Whether `bias` is read.
    pub(crate) has_bias: bool,
    /// Multipliers: one per output channel where `per_channel`, else one for all.
    pub(crate) multipliers: &'a [i32],
    /// Shifts, as many as `multipliers`.
    pub(crate) shifts: &'a [i32],
    /// Whether `multipliers` and `shifts` hold one per output channel (else `[0]` serves
    /// every channel: FULLY_CONNECTED's per-tensor path).
    pub(crate) per_channel: bool,
    /// `output_zero_point`.
    pub(crate) output_offset: i32,
    /// Lower clamp.
    pub(crate) act_min: i32,
    /// Upper clamp.
    pub(crate) act_max: i32,
}

impl OutputStageS8<'_> {
    /// Whether the tuned kernels' [`ChannelStageS8`] takes this stage for `channels` output
    /// channels: no multiplier is negative (TFLite's quantizer gives them in `[2^30, 2^31)`
    /// or 0). The stage's slices hold the channels' entries (the kernel's check).
    #[cfg_attr(not(ember_tuned), allow(dead_code))]
    pub(crate) fn tuned_takes(&self, channels: usize) -> bool {
        let n = if self.per_channel { channels } else { 1 };
        self.multipliers
            .get(..n)
            .is_some_and(|m| m.iter().all(|&m| m >= 0))
    }

    /// The per-channel view of this stage for `channels` output channels where the stage
    /// is per channel, every multiplier is not negative and every shift is a right shift
    /// (`-31..=-1`, as TFLite's quantizer gives for every multiplier below 1/2); `None`
    /// otherwise, or where a slice is short.
    #[cfg_attr(not(ember_dsp), allow(dead_code))]
    pub(crate) fn right_shifted(&self, channels: usize) -> Option<RightShiftedS8<'_>> {
        if !self.per_channel {
            return None;
        }
        self.right_shifted_entries(channels, channels)
    }

    /// [`right_shifted`](Self::right_shifted) for a per-tensor stage: its one multiplier
    /// and shift as one-entry slices (the biases still one per channel).
    #[cfg_attr(not(ember_dsp), allow(dead_code))]
    pub(crate) fn right_shifted_per_tensor(&self, channels: usize) -> Option<RightShiftedS8<'_>> {
        if self.per_channel {
            return None;
        }
        self.right_shifted_entries(channels, 1)
    }

    /// The view over `channels` biases and `entries` multipliers and shifts.
    fn right_shifted_entries(&self, channels: usize, entries: usize) -> Option<RightShiftedS8<'_>> {
        let multipliers = self.multipliers.get(..entries)?;
        let shifts = self.shifts.get(..entries)?;
        let bias = if self.has_bias {
            self.bias.get(..channels)?
        } else {
            &[]
        };
        let takes =
            multipliers.iter().all(|&m| m >= 0) && shifts.iter().all(|s| (-31..=-1).contains(s));
        let lanes = |v: i32| u32::from(v as u8) * 0x0101_0101;
        takes.then(|| RightShiftedS8 {
            bias,
            multipliers,
            shifts,
            output_offset: self.output_offset,
            act_mins: lanes(self.act_min),
            act_maxs: lanes(self.act_max),
        })
    }

    /// Output channel `oc`'s stage with its parameters read, for the tuned kernels, which
    /// apply one channel's to several pixels: [`apply`](Self::apply)'s result where
    /// [`tuned_takes`](Self::tuned_takes) holds.
    #[cfg_attr(not(ember_dsp), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn channel(&self, oc: usize) -> ChannelStageS8 {
        let c = if self.per_channel { oc } else { 0 };
        let bias = if self.has_bias { self.bias[oc] } else { 0 };
        ChannelStageS8::new(self, bias, self.multipliers[c], self.shifts[c])
    }

    /// The stages of output channels `c..c + N` ([`channel`](Self::channel) of each), each
    /// of the stage's slices read once: the kernels' check makes every slice hold them.
    #[cfg_attr(not(ember_tuned), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn stages<const N: usize>(&self, c: usize) -> [ChannelStageS8; N] {
        let per_channel = |values: &[i32], own: bool| -> [i32; N] {
            match values.get(c..c + N) {
                Some(held) if own && held.len() == N => core::array::from_fn(|k| held[k]),
                _ => [values.first().copied().unwrap_or(0); N],
            }
        };
        let multipliers = per_channel(self.multipliers, self.per_channel);
        let shifts = per_channel(self.shifts, self.per_channel);
        let bias = match self.bias.get(c..c + N) {
            Some(held) if self.has_bias && held.len() == N => core::array::from_fn(|k| held[k]),
            _ => [0; N],
        };
        core::array::from_fn(|k| ChannelStageS8::new(self, bias[k], multipliers[k], shifts[k]))
    }

    /// Writes output channels `c..c + N` of `acc` into `out`: the one-multiply channel
    /// stages where `fast` ([`tuned_takes`](Self::tuned_takes)), else the reference's steps
    /// out of line ([`apply_each`](Self::apply_each): TFLite's quantizer never gives the
    /// negative multiplier that needs them).
    #[cfg_attr(not(ember_blocked), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn write<const N: usize>(
        &self,
        fast: bool,
        c: usize,
        acc: &[i32; N],
        out: &mut [i8],
    ) {
        if fast {
            for ((o, &a), channel) in out.iter_mut().zip(acc).zip(self.stages::<N>(c)) {
                *o = channel.apply(a);
            }
        } else {
            self.apply_each(c, acc, out);
        }
    }

    /// [`apply`](Self::apply) to each of `acc` into `out`, output channels `c` on; out of
    /// line, for tuned kernels' rare stages ([`tuned_takes`](Self::tuned_takes) false).
    #[cfg_attr(not(ember_blocked), allow(dead_code))]
    #[inline(never)]
    pub(crate) fn apply_each(&self, c: usize, acc: &[i32], out: &mut [i8]) {
        for (k, (o, &a)) in out.iter_mut().zip(acc).enumerate() {
            *o = self.apply(c + k, a);
        }
    }

    /// Output channel `oc`'s value for the accumulated products `acc`.
    #[inline(always)]
    pub(crate) fn apply(&self, oc: usize, mut acc: i32) -> i8 {
        if self.has_bias {
            acc = acc.wrapping_add(self.bias[oc]);
        }
        let c = if self.per_channel { oc } else { 0 };
        let v = multiply_by_quantized_multiplier(acc, self.multipliers[c], self.shifts[c])
            .wrapping_add(self.output_offset);
        crate::shape::clamp_s8(v, self.act_min, self.act_max)
    }
}

/// [`multiply_by_quantized_multiplier`] in fewer 32-bit instructions, bit for bit the same
/// for every `x`, every `multiplier` and `shift` in `-31..=30` (what the kernels accept):
/// see [`high_mul_divide`]. The tests hold it to the reference; [`ChannelStageS8`] applies
/// the same steps with its shift split once.
#[cfg(test)]
fn multiply_by_quantized_multiplier_32(x: i32, multiplier: i32, shift: i32) -> i32 {
    let (left, right) = split_shift(shift);
    high_mul_divide(x.wrapping_shl(left), multiplier, right, pot_mask(right))
}

/// A shift in `-31..=30` as its left part and its right part (one of them 0).
#[cfg(test)]
fn split_shift(shift: i32) -> (u32, u32) {
    (shift.max(0) as u32, (-shift).max(0) as u32)
}

/// `2^right - 1`, `right` in `0..=31`.
#[cfg(test)]
fn pot_mask(right: u32) -> i32 {
    1u32.wrapping_shl(right).wrapping_sub(1) as i32
}

/// [`multiply_by_quantized_multiplier`] by one multiplier that is not negative and one
/// shift in `-31..=0` (TFLM's `MultiplyByQuantizedMultiplierSmallerThanOneExp`, ADD's
/// rescales), in one 64-bit multiply-add and shift: with `P = x * multiplier`, the
/// result is `floor((P + rounding - correction [x < 0]) / 2^(31 + e))` for the right shift
/// `e`, where `rounding = 2^30 + 2^(30 + e)` and `correction = 2^31` for `e >= 1` (see
/// [`ChannelStageS8`]) and `rounding = 2^30`, `correction = 0` for `e = 0` (the doubled
/// high product itself). Its parts are computed once, so that a loop over many values
/// pays only the multiply.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rescale {
    multiplier: i32,
    rounding: i64,
    /// `-2^31` for a right shift, else 0: added where `x` is negative.
    correction: i64,
    /// `31 + e`.
    total_shift: u32,
}

impl Rescale {
    /// The rescale by `multiplier` and `shift`; `None` for a negative multiplier or a shift
    /// outside `-31..=0`, which take [`multiply_by_quantized_multiplier`] itself.
    pub(crate) fn new(multiplier: i32, shift: i32) -> Option<Self> {
        if multiplier < 0 || !(-31..=0).contains(&shift) {
            return None;
        }
        let right = shift.unsigned_abs();
        let (rounding, correction) = if right == 0 {
            (1 << 30, 0)
        } else {
            ((1 << 30) + (1i64 << (30 + right)), -(1i64 << 31))
        };
        Some(Rescale {
            multiplier,
            rounding,
            correction,
            total_shift: 31 + right,
        })
    }

    /// `multiply_by_quantized_multiplier(x, multiplier, shift)`.
    #[inline(always)]
    pub(crate) fn apply(&self, x: i32) -> i32 {
        let sign = i64::from(x >> 31) & self.correction;
        let q = wide_mul(x, self.multiplier) + self.rounding + sign;
        (q >> self.total_shift) as i32
    }
}

/// `a * b` in 64 bits: SMULL on the Cortex-M DSP path.
#[inline(always)]
fn wide_mul(a: i32, b: i32) -> i64 {
    #[cfg(ember_dsp)]
    {
        crate::simd::smull(a, b)
    }
    #[cfg(not(ember_dsp))]
    {
        i64::from(a) * i64::from(b)
    }
}

/// [`saturating_rounding_doubling_high_mul`] then [`rounding_divide_by_pot`] by `right`
/// (`mask` is [`pot_mask`]`(right)`), in 32-bit steps: the nudged, truncating division of
/// the doubled high product is `(x * multiplier + 2^30) >> 31` with an arithmetic
/// (flooring) shift for either sign of the product, whose only result outside `i32` is
/// `2^31`, from `i32::MIN * i32::MIN`, which saturates (as `i32::MIN` after the cast,
/// which no other product gives); and the rounding division's mask fits 32 bits.
#[cfg(test)]
fn high_mul_divide(x: i32, multiplier: i32, right: u32, mask: i32) -> i32 {
    let high = high_mul(x, multiplier);
    let high = if high == i32::MIN { i32::MAX } else { high };
    divide_by_pot(high, right, mask)
}

/// The nudged, truncating division of the doubled high product, `(x * multiplier + 2^30)
/// >> 31` (see `high_mul_divide`): [`saturating_rounding_doubling_high_mul`] bit for bit
/// wherever `multiplier` is not `i32::MIN` (the one product it saturates is
/// `i32::MIN * i32::MIN`).
#[inline(always)]
fn high_mul(x: i32, multiplier: i32) -> i32 {
    ((wide_mul(x, multiplier) + (1 << 30)) >> 31) as i32
}

/// [`rounding_divide_by_pot`] by `right`, `mask` being [`pot_mask`]`(right)`.
#[cfg(test)]
fn divide_by_pot(x: i32, right: u32, mask: i32) -> i32 {
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> right) + i32::from(x & mask > threshold)
}

/// One output channel's [`OutputStageS8`], its parameters read once, for a multiplier that
/// is not negative ([`OutputStageS8::tuned_takes`]): [`apply`](Self::apply) is bit for bit
/// `OutputStageS8::apply` for that channel in one 64-bit multiply-accumulate and a shift.
///
/// With `P = x * multiplier` (`x` the biased sum), the doubled high product is
/// `h = floor((P + 2^30) / 2^31)` (see `high_mul_divide`; no saturation: the multiplier is
/// not `i32::MIN`), and for a right shift `e >= 1` TFLite's rounding division of `h` is
/// `floor((h + 2^(e-1) - [h < 0]) / 2^e)`, which (a floor of a floor by integers) is
/// `floor((P + 2^30 + 2^(30+e) - 2^31 [h < 0]) / 2^(31+e))`. `[h < 0]` may be read as
/// `[x < 0]`: they differ only where `-2^30 <= P < 0` (or the multiplier is 0), where
/// `h = 0` and both corrections give 0. The sum stays inside `±2^63`, and its shift by
/// `31 + e >= 32` is its high word's by `e - 1`. A shift `e = 0` (the left shifts) takes
/// `h` itself.
#[derive(Clone, Copy)]
pub(crate) struct ChannelStageS8 {
    bias: i32,
    multiplier: i32,
    /// TFLite's shift: negative for the right shifts `e = -shift` the one-multiply form
    /// takes, else the left shift before [`high_mul`].
    shift: i32,
    /// `e - 1` for a right shift `e`, where the 64-bit form is computed per channel (the
    /// SMLAL form derives it per value, in fewer registers).
    #[cfg(not(ember_smlal))]
    high_shift: u32,
    /// `2^30 + 2^(30 + e)` for a right shift `e`, likewise.
    #[cfg(not(ember_smlal))]
    rounding: i64,
    output_offset: i32,
    act_min: i32,
    act_max: i32,
}

impl ChannelStageS8 {
    /// The stage of one channel of `stage`: its bias, multiplier and shift.
    #[inline(always)]
    fn new(stage: &OutputStageS8<'_>, bias: i32, multiplier: i32, shift: i32) -> Self {
        let clamp = (stage.output_offset, stage.act_min, stage.act_max);
        Self::from_parts(bias, multiplier, shift, clamp)
    }

    /// The stage of a channel's bias, multiplier and shift and its op's output offset and
    /// clamp `(output_offset, act_min, act_max)`.
    #[inline(always)]
    fn from_parts(bias: i32, multiplier: i32, shift: i32, clamp: (i32, i32, i32)) -> Self {
        // `e - 1 = -shift - 1`, and with `t = 2^(e-1)` the rounding's high word is `t / 2`
        // and its low one `2^30 | (t << 31)` (`2^31` where `e` is 1, and the bits of
        // `2^(30+e)` above the low word otherwise). A left shift's values are not read.
        #[cfg(not(ember_smlal))]
        let (high_shift, rounding) = {
            let high_shift = (!shift) as u32 & 31;
            let t = 1u32 << high_shift;
            let rounding = (i64::from(t >> 1) << 32) | i64::from((1 << 30) | (t << 31));
            (high_shift, rounding)
        };
        ChannelStageS8 {
            bias,
            multiplier,
            shift,
            #[cfg(not(ember_smlal))]
            high_shift,
            #[cfg(not(ember_smlal))]
            rounding,
            output_offset: clamp.0,
            act_min: clamp.1,
            act_max: clamp.2,
        }
    }

    /// The channel's value for the accumulated products `acc`.
    #[cfg_attr(not(ember_tuned), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn apply(&self, acc: i32) -> i8 {
        let x = acc.wrapping_add(self.bias);
        #[cfg(ember_smlal)]
        if self.shift < 0 {
            return right_shifted(x, self, self.shift) as i8;
        }
        // One clamp after either shift: the compiler selects rather than branches.
        #[cfg(not(ember_smlal))]
        let v = if self.shift < 0 {
            self.rounded_high(x)
        } else {
            high_mul(x.wrapping_shl(self.shift as u32), self.multiplier)
        };
        #[cfg(ember_smlal)]
        let v = high_mul(x.wrapping_shl(self.shift as u32), self.multiplier);
        crate::shape::clamp_s8(
            v.wrapping_add(self.output_offset),
            self.act_min,
            self.act_max,
        )
    }
}

/// An [`OutputStageS8`]'s per-channel slices cut to the op's output channels, for a stage
/// whose every shift is a right shift ([`OutputStageS8::right_shifted`]): the tuned
/// kernels walk them beside their filter rows, with no per-channel choice or bounds check.
#[cfg_attr(not(ember_dsp), allow(dead_code))]
pub(crate) struct RightShiftedS8<'a> {
    /// One per channel; empty where the op has no bias.
    pub(crate) bias: &'a [i32],
    /// One per channel (one for every channel, per tensor).
    pub(crate) multipliers: &'a [i32],
    /// As many as `multipliers`, each in `-31..=-1`.
    pub(crate) shifts: &'a [i32],
    /// The output offset.
    output_offset: i32,
    /// The lower clamp in each byte lane.
    act_mins: u32,
    /// The upper clamp in each byte lane.
    act_maxs: u32,
}

#[cfg_attr(not(ember_dsp), allow(dead_code))]
impl RightShiftedS8<'_> {
    /// The value of the sum `acc` of a channel whose bias (0 without one), multiplier and
    /// shift are given, before the clamp: saturated to int8, in the low byte (the other
    /// bytes its sign). [`clamp`](Self::clamp) takes four of them packed.
    #[inline(always)]
    pub(crate) fn saturated(&self, acc: i32, bias: i32, multiplier: i32, shift: i32) -> i32 {
        saturated(
            acc.wrapping_add(bias),
            multiplier,
            shift,
            self.output_offset,
        )
    }

    /// Four [`saturated`](Self::saturated) values, one per byte lane of `packed`, clamped
    /// to the stage's activation range.
    #[cfg(any(ember_dsp, test))]
    #[inline(always)]
    pub(crate) fn clamp(&self, packed: u32) -> u32 {
        crate::simd::clamp8(packed, self.act_mins, self.act_maxs)
    }
}

/// The low bytes of four values packed into a word, the first lowest.
#[cfg_attr(not(ember_dsp), allow(dead_code))]
#[inline(always)]
pub(crate) fn pack_bytes([b0, b1, b2, b3]: [i32; 4]) -> u32 {
    (b0 as u32 & 0xff) | (b1 as u32 & 0xff) << 8 | (b2 as u32 & 0xff) << 16 | (b3 as u32) << 24
}

/// The one-multiply requantization on 32-bit Arm with Thumb-2, as `asm!` lines shared by
/// [`saturated`] and [`right_shifted`]: from `x`, `m` and the right shift `e = -s`
/// (`s` in `-31..=-1`), `high = ((x * m + rounding - 2^31 [x < 0]) >> (31 + e)) + offset`,
/// the 64-bit sum built from `t = 2^(e-1)` (high word `t / 2`, low word
/// `2^30 | (t << 31)`), the sign's correction added with a carry, SMLAL for the product;
/// `s`, `t` and `low` are clobbered.
#[cfg(ember_smlal)]
macro_rules! rounded_high_plus_offset {
    () => {
        concat!(
            "mvn {s}, {s}\n",
            "mov.w {t}, #1\n",
            "lsl {t}, {t}, {s}\n",
            "lsr {high}, {t}, #1\n",
            "and {low}, {x}, #0x80000000\n",
            "add {low}, {low}, #0x40000000\n",
            "adds {low}, {low}, {t}, lsl #31\n",
            "adc {high}, {high}, {x}, asr #31\n",
            "smlal {low}, {high}, {x}, {m}\n",
            "asr {high}, {high}, {s}\n",
            "add {high}, {high}, {offset}",
        )
    };
}

/// `x` through `multiplier`, the right shift `-shift` (in `1..=31`) and the output offset,
/// saturated to int8: [`right_shifted`] before its clamp, with SSAT (one instruction)
/// where the clamp's compares were.
#[cfg(ember_smlal)]
#[inline(always)]
fn saturated(x: i32, multiplier: i32, shift: i32, output_offset: i32) -> i32 {
    let value: i32;
    // SAFETY: register operands only: no memory, no stack. ADDS and ADC change the flags
    // and SSAT may set Q, none of which is claimed preserved.
    unsafe {
        core::arch::asm!(
            rounded_high_plus_offset!(),
            "ssat {high}, #8, {high}",
            s = inout(reg) shift => _,
            t = out(reg) _,
            low = out(reg) _,
            high = out(reg) value,
            x = in(reg) x,
            m = in(reg) multiplier,
            offset = in(reg) output_offset,
            options(pure, nomem, nostack),
        );
    }
    value
}

/// [`saturated`] in 64-bit arithmetic.
#[cfg(not(ember_smlal))]
#[cfg_attr(not(ember_dsp), allow(dead_code))]
#[inline(always)]
fn saturated(x: i32, multiplier: i32, shift: i32, output_offset: i32) -> i32 {
    let stage = ChannelStageS8::from_parts(0, multiplier, shift, (output_offset, -128, 127));
    right_shifted(x, &stage, shift)
}

/// The value of the biased sum `x` through `stage`'s multiplier, its right shift
/// `-shift` (in `1..=31`), output offset and clamp: `(x * multiplier + rounding - 2^31
/// [x < 0]) >> (31 + e)` with `rounding = 2^30 + 2^(30 + e)`, whose 64-bit sum is built
/// from `t = 2^(e-1)`: high word `t / 2`, low word `2^30 | (t << 31)`. On 32-bit Arm with
/// Thumb-2 one `asm!` block of 17 instructions (SMLAL for the sum, the sign's correction
/// added with a carry, the clamp in two IT blocks).
#[cfg(ember_smlal)]
#[inline(always)]
fn right_shifted(x: i32, stage: &ChannelStageS8, shift: i32) -> i32 {
    let value: i32;
    // SAFETY: register operands only: no memory, no stack. ADDS, ADC and CMP change the
    // flags, which are not claimed preserved.
    unsafe {
        core::arch::asm!(
            rounded_high_plus_offset!(),
            "cmp {high}, {min}",
            "it lt",
            "movlt {high}, {min}",
            "cmp {high}, {max}",
            "it gt",
            "movgt {high}, {max}",
            s = inout(reg) shift => _,
            t = out(reg) _,
            low = out(reg) _,
            high = out(reg) value,
            x = in(reg) x,
            m = in(reg) stage.multiplier,
            offset = in(reg) stage.output_offset,
            min = in(reg) stage.act_min,
            max = in(reg) stage.act_max,
            options(pure, nomem, nostack),
        );
    }
    value
}

/// [`right_shifted`] in 64-bit arithmetic.
#[cfg(not(ember_smlal))]
#[cfg_attr(not(ember_dsp), allow(dead_code))]
#[inline(always)]
fn right_shifted(x: i32, stage: &ChannelStageS8, _shift: i32) -> i32 {
    i32::from(crate::shape::clamp_s8(
        stage.rounded_high(x).wrapping_add(stage.output_offset),
        stage.act_min,
        stage.act_max,
    ))
}

#[cfg(not(ember_smlal))]
impl ChannelStageS8 {
    /// `(x * multiplier + rounding - 2^31 [x < 0]) >> (31 + e)` for the channel's right
    /// shift `e`, in 64-bit arithmetic with the rounding and shift computed with the stage.
    #[inline(always)]
    fn rounded_high(&self, x: i32) -> i32 {
        // The correction `-2^31 [x < 0]` is x's sign bit, as a signed 64-bit value.
        let sign = i64::from(x & i32::MIN);
        let q = wide_mul(x, self.multiplier) + self.rounding + sign;
        #[cfg(target_pointer_width = "64")]
        let v = (q >> (32 + self.high_shift)) as i32;
        #[cfg(not(target_pointer_width = "64"))]
        let v = ((q >> 32) as i32) >> self.high_shift;
        v
    }
}

/// A real multiplier's fixed-point form `(multiplier, shift)`: `real ≈ multiplier * 2^(shift
/// - 31)` with `multiplier` in `[2^30, 2^31)`, as TFLite's `QuantizeMultiplier` computes it
/// (frexp, then `round` half away from zero; 0 for 0 and for values below `2^-31`).
pub fn quantize_multiplier(real: f64) -> (i32, i32) {
    if real == 0.0 {
        return (0, 0);
    }
    let (q, mut shift) = libm::frexp(real);
    let mut fixed = libm::round(q * (1i64 << 31) as f64) as i64;
    if fixed == 1i64 << 31 {
        fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        shift = 0;
        fixed = 0;
    }
    (fixed as i32, shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_wraps_as_int32() {
        assert_eq!(dot_s8(&[1, -2, 3], &[4, 5, -6]), 4 - 10 - 18);
        assert_eq!(dot_s8(&[-128; 4], &[-128; 3]), 3 * 16_384);
        assert_eq!(dot_s8(&[], &[1]), 0);
    }

    #[test]
    fn high_mul_rounds_and_saturates() {
        assert_eq!(
            saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN),
            i32::MAX
        );
        assert_eq!(
            saturating_rounding_doubling_high_mul(1 << 30, 1 << 30),
            1 << 29
        );
        // 3 * 2^30 * 2 / 2^32 = 1.5 → 2; -1.5 → -1: gemmlowp's nudge of `1 - 2^30` for
        // negative products rounds their ties up, as TFLM does.
        assert_eq!(saturating_rounding_doubling_high_mul(3, 1 << 30), 2);
        assert_eq!(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);
    }

    #[test]
    fn divide_by_pot_rounds_half_away_from_zero() {
        assert_eq!(rounding_divide_by_pot(5, 1), 3);
        assert_eq!(rounding_divide_by_pot(-5, 1), -3);
        assert_eq!(rounding_divide_by_pot(4, 1), 2);
        assert_eq!(rounding_divide_by_pot(7, 0), 7);
        assert_eq!(rounding_divide_by_pot(i32::MIN, 31), -1);
    }

    #[test]
    fn the_32_bit_requantization_is_the_reference() {
        let edges = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            1 << 30,
            -(1 << 30),
            (1 << 30) + 1,
            -(1 << 30) - 1,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            i32::MAX - 1,
            12_345_678,
            -12_345_678,
        ];
        let mut seed = 0x2545_f491u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as i32
        };
        for shift in -31..=30 {
            for &x in &edges {
                for &m in &edges {
                    assert_eq!(
                        multiply_by_quantized_multiplier_32(x, m, shift),
                        multiply_by_quantized_multiplier(x, m, shift),
                        "{x} {m} {shift}"
                    );
                }
            }
            for _ in 0..20_000 {
                let (x, m) = (next() >> (next() & 31), next());
                assert_eq!(
                    multiply_by_quantized_multiplier_32(x, m, shift),
                    multiply_by_quantized_multiplier(x, m, shift),
                    "{x} {m} {shift}"
                );
            }
        }
    }

    #[test]
    fn a_channel_stage_is_the_output_stage() {
        let bias = [7, i32::MAX - 3, -100_000];
        let multipliers = [1 << 30, i32::MAX, 1_518_500_250];
        let shifts = [-31, 30, -7];
        for per_channel in [false, true] {
            for has_bias in [false, true] {
                let stage = OutputStageS8 {
                    bias: &bias,
                    has_bias,
                    multipliers: &multipliers,
                    shifts: &shifts,
                    per_channel,
                    output_offset: -5,
                    act_min: -100,
                    act_max: 110,
                };
                assert!(stage.tuned_takes(3));
                for c in 0..2 {
                    let [s0, s1] = stage.stages::<2>(c);
                    for acc in [0, -1, 1 << 20, i32::MIN, 123_457] {
                        assert_eq!(s0.apply(acc), stage.channel(c).apply(acc));
                        assert_eq!(s1.apply(acc), stage.channel(c + 1).apply(acc));
                    }
                }
                for oc in 0..3 {
                    for acc in [0, 1, -1, 1 << 20, -(1 << 24), i32::MAX, i32::MIN, 123_457] {
                        assert_eq!(stage.channel(oc).apply(acc), stage.apply(oc, acc));
                    }
                }
            }
        }
        // Every shift the kernels take, the right shift of 1 (whose rounding has a low
        // word of 3 * 2^30) and the left shifts among them.
        for shift in [-31, -30, -16, -2, -1, 0, 1, 7, 30] {
            for multiplier in [0, 1, 1 << 30, 1_518_500_250, i32::MAX] {
                let stage = OutputStageS8 {
                    bias: &[0],
                    has_bias: false,
                    multipliers: &[multiplier],
                    shifts: &[shift],
                    per_channel: false,
                    output_offset: 3,
                    act_min: -128,
                    act_max: 127,
                };
                for acc in [
                    0,
                    1,
                    -1,
                    2,
                    -2,
                    3,
                    -3,
                    1 << 20,
                    -(1 << 24),
                    i32::MAX,
                    i32::MIN,
                ] {
                    let expected = stage.apply(0, acc);
                    assert_eq!(
                        stage.channel(0).apply(acc),
                        expected,
                        "{shift} {multiplier} {acc}"
                    );
                }
            }
        }
        // A negative multiplier is the portable kernels' alone.
        let stage = OutputStageS8 {
            bias: &bias,
            has_bias: true,
            multipliers: &[1 << 30, -7, 1],
            shifts: &shifts,
            per_channel: true,
            output_offset: 0,
            act_min: -128,
            act_max: 127,
        };
        assert!(stage.tuned_takes(1) && !stage.tuned_takes(2) && !stage.tuned_takes(4));
    }

    #[test]
    fn a_rescale_is_the_reference() {
        let values = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            255 << 20,
            -(255 << 20),
            1 << 28,
            i32::MAX,
            i32::MIN,
        ];
        for shift in [0, -1, -2, -5, -19, -30, -31] {
            for multiplier in [0, 1, 1 << 30, 1_518_500_250, i32::MAX] {
                let rescale = Rescale::new(multiplier, shift).expect("takes it");
                for x in values.into_iter().chain((-300..300).map(|k| k * 4_099)) {
                    let expected = multiply_by_quantized_multiplier(x, multiplier, shift);
                    assert_eq!(rescale.apply(x), expected, "{x} {multiplier} {shift}");
                }
            }
        }
        assert!(Rescale::new(-1, -3).is_none() && Rescale::new(1 << 30, 1).is_none());
    }

    #[test]
    fn quantized_multiplier_round_trips() {
        for real in [0.5, 0.75, 0.001_234_5, 1.5, 3.0e-5, 0.999_999_999_9] {
            let (m, shift) = quantize_multiplier(real);
            assert!((1 << 30..=i32::MAX).contains(&m), "{real}: {m}");
            let back = f64::from(m) * 2f64.powi(shift - 31);
            assert!((back - real).abs() <= real * 1e-9, "{real}: {back}");
        }
        assert_eq!(quantize_multiplier(0.0), (0, 0));
        assert_eq!(quantize_multiplier(1e-12), (0, 0));
        // A fraction that rounds up to 1.0 moves to the next exponent.
        assert_eq!(quantize_multiplier(0.999_999_999_99), (1 << 30, 1));
        // 100 * 0.5 = 50, exactly.
        let (m, s) = quantize_multiplier(0.5);
        assert_eq!(multiply_by_quantized_multiplier(100, m, s), 50);
    }
}
