//! MEAN: TFLM's micro MEAN: int8 through `reference_ops::QuantizedMeanOrSum` (an int32
//! sum, the zero point removed once per output, the multiplier divided by the count),
//! float through `reference_ops::Mean` (an `f32` sum in input order, divided by the count
//! as `f32`). `keep_dims` changes only the output's shape, not its data.
//!
//! Bindings of `mean_s8` and `mean_f32`: 0 input, 1 output (`i8` or `f32`).

use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use crate::shape::{self, need};
use hal_core::kernel::KernelError;

/// The largest input rank MEAN takes here.
pub const MAX_RANK: usize = 6;

/// The input's shape and the reduced axes. Encoded as `rank` (1..=6), the `rank`
/// dimensions, then `axes` (bit `d` set: dimension `d` is reduced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeanShape {
    /// Dimensions in use.
    pub rank: usize,
    /// Input dimensions, outermost first (the first `rank`; the rest 1).
    pub input: [usize; MAX_RANK],
    /// Bit `d`: dimension `d` is reduced.
    pub axes: u32,
}

impl MeanShape {
    /// The shape from the input's dimensions and the `axis` tensor, resolved as TFLM's
    /// `ResolveAxis` (negative axes count from the end, duplicates ignored).
    pub fn new(input: &[usize], axis: &[i32]) -> Result<Self, KernelError> {
        let rank = input.len();
        if rank == 0 || rank > MAX_RANK {
            return Err(KernelError::Shape("mean rank 0 or above 6"));
        }
        let mut s = Self {
            rank,
            input: [1; MAX_RANK],
            axes: 0,
        };
        s.input[..rank].copy_from_slice(input);
        for &a in axis {
            let r = if a < 0 { a + rank as i32 } else { a };
            if r < 0 || r >= rank as i32 {
                return Err(KernelError::Shape("mean axis out of range"));
            }
            s.axes |= 1 << r;
        }
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), KernelError> {
        if self.input.iter().any(|&d| d == 0 || d > shape::MAX_DIM) {
            return Err(KernelError::Shape("dimension zero or above i32::MAX"));
        }
        if self.axes >> self.rank != 0 {
            return Err(KernelError::Shape("mean axis out of range"));
        }
        shape::product(&self.input)?;
        Ok(())
    }

    fn reduced(&self, d: usize) -> bool {
        self.axes & (1 << d) != 0
    }

    /// Input elements per output element (1 where no axis is reduced).
    pub fn count(&self) -> usize {
        (0..self.rank)
            .filter(|&d| self.reduced(d))
            .map(|d| self.input[d])
            .product()
    }

    /// Output elements.
    pub fn output_len(&self) -> usize {
        (0..self.rank)
            .filter(|&d| !self.reduced(d))
            .map(|d| self.input[d])
            .product()
    }

    pub(crate) fn check(&self, lens: &[usize], elem: usize) -> Result<(), KernelError> {
        need(lens, 0, self.input.iter().product(), elem)?;
        need(lens, 1, self.output_len(), elem)
    }

    /// For each output element in order: `init`, then `add(acc, input_index)` over its
    /// reduced elements in input (row-major) order, then `finish(output_index, acc)`.
    #[inline(always)]
    pub(crate) fn run_loops<A: Copy>(
        &self,
        init: A,
        mut add: impl FnMut(&mut A, usize),
        mut finish: impl FnMut(usize, A),
    ) {
        let r = self.rank;
        let mut stride = [0usize; MAX_RANK];
        let mut acc = 1;
        for d in (0..r).rev() {
            stride[d] = acc;
            acc *= self.input[d];
        }
        // Kept and reduced dimensions, each in order.
        let (mut kept, mut red) = ([0usize; MAX_RANK], [0usize; MAX_RANK]);
        let (mut nk, mut nr) = (0, 0);
        for d in 0..r {
            if self.reduced(d) {
                red[nr] = d;
                nr += 1;
            } else {
                kept[nk] = d;
                nk += 1;
            }
        }
        let mut ko = [0usize; MAX_RANK];
        for o in 0..self.output_len() {
            let base: usize = (0..nk).map(|k| ko[k] * stride[kept[k]]).sum();
            let mut a = init;
            let mut ri = [0usize; MAX_RANK];
            for _ in 0..self.count() {
                let off: usize = (0..nr).map(|k| ri[k] * stride[red[k]]).sum();
                add(&mut a, base + off);
                for k in (0..nr).rev() {
                    ri[k] += 1;
                    if ri[k] < self.input[red[k]] {
                        break;
                    }
                    ri[k] = 0;
                }
            }
            finish(o, a);
            for k in (0..nk).rev() {
                ko[k] += 1;
                if ko[k] < self.input[kept[k]] {
                    break;
                }
                ko[k] = 0;
            }
        }
    }

    pub(crate) fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([self.rank as u32]);
        out.extend(self.input[..self.rank].iter().map(|&d| d as u32));
        out.extend([self.axes]);
    }

    pub(crate) fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let rank = w.usize()?;
        if rank == 0 || rank > MAX_RANK {
            return Err(KernelError::Shape("mean rank 0 or above 6"));
        }
        let mut s = Self {
            rank,
            input: [1; MAX_RANK],
            axes: 0,
        };
        for d in &mut s.input[..rank] {
            *d = w.usize()?;
        }
        s.axes = w.u32()?;
        s.validate()?;
        Ok(s)
    }
}

/// `mean_s8`. Words: [`MeanShape`]'s, then `input_zero_point`, `output_zero_point`,
/// `multiplier`, `shift` (`input_scale / output_scale` quantized, shift `-31..=30`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeanS8 {
    /// Shape and axes.
    pub shape: MeanShape,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// [`MeanS8::multiplier`]'s multiplier.
    pub multiplier: i32,
    /// Its shift.
    pub shift: i32,
}

impl MeanS8 {
    /// `quantize_multiplier(f64(input_scale) / f64(output_scale))`, as TFLM's Prepare.
    pub fn multiplier(input_scale: f32, output_scale: f32) -> (i32, i32) {
        quantize_multiplier(f64::from(input_scale) / f64::from(output_scale))
    }

    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the mean.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.run_with(input, output, true)
    }

    /// Runs TFLM's `QuantizedMeanOrSum`: the mean where `fold_count`, else the sum.
    fn run_with(
        &self,
        input: &[i8],
        output: &mut [i8],
        fold_count: bool,
    ) -> Result<(), KernelError> {
        self.check(&[input.len(), output.len()])?;
        let n = self.shape.count() as i64;
        // For the mean TFLM folds the division by the count into the multiplier.
        let mut shift = 63 - (n as u64).leading_zeros() as i32;
        shift = shift.min(32).min(31 + self.shift);
        let (multiplier, out_shift) = if fold_count && shift >= 0 {
            (
                ((i64::from(self.multiplier) << shift) / n) as i32,
                self.shift - shift,
            )
        } else {
            (self.multiplier, self.shift)
        };
        shape::shift_ok(out_shift)?;
        let zp_total = i64::from(self.input_zero_point) * n;
        let out_zp = self.output_zero_point;
        self.shape.run_loops(
            0i32,
            |acc, i| *acc = acc.wrapping_add(i32::from(input[i])),
            |o, sum| {
                let shifted = (i64::from(sum) - zp_total) as i32;
                let v = multiply_by_quantized_multiplier(shifted, multiplier, out_shift)
                    .wrapping_add(out_zp);
                output[o] = v.clamp(-128, 127) as i8;
            },
        );
        Ok(())
    }
}

impl KernelParams for MeanS8 {
    const KERNEL: &'static str = "mean_s8";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend(
            [
                self.input_zero_point,
                self.output_zero_point,
                self.multiplier,
                self.shift,
            ]
            .map(|v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let shape = MeanShape::decode(w)?;
        Ok(Self {
            shape,
            input_zero_point: w.i32()?,
            output_zero_point: w.i32()?,
            multiplier: w.i32()?,
            shift: shape::shift(w)?,
        })
    }
}

/// `sum_s8`: int8 SUM, TFLM's `QuantizedMeanOrSum` with `compute_sum`. Words: [`MeanS8`]'s,
/// which it holds (the multiplier `input_scale / output_scale`, not divided by the count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SumS8(pub MeanS8);

impl SumS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.0.check(binding_lens)
    }

    /// Runs the sum.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.0.run_with(input, output, false)
    }
}

impl KernelParams for SumS8 {
    const KERNEL: &'static str = "sum_s8";
    const BINDINGS: &'static [BindingUse] = MeanS8::BINDINGS;

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.0.encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        MeanS8::decode(words).map(Self)
    }
}

/// `mean_f32`. Words: [`MeanShape`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeanF32 {
    /// Shape and axes.
    pub shape: MeanShape,
}

impl MeanF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the mean.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.check(&[input.len() * 4, output.len() * 4])?;
        let n = self.shape.count() as f32;
        self.shape.run_loops(
            0.0f32,
            |acc, i| *acc += input[i],
            |o, sum| output[o] = sum / n,
        );
        Ok(())
    }
}

impl KernelParams for MeanF32 {
    const KERNEL: &'static str = "mean_f32";
    const BINDINGS: &'static [BindingUse] = &[BindingUse::READ_32, BindingUse::WRITE_32];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            shape: MeanShape::decode(w)?,
        })
    }
}
