//! AVERAGE_POOL_2D and MAX_POOL_2D: TFLM's `reference_integer_ops::{AveragePool,
//! MaxPool}` (int8) and `reference_ops::{AveragePool, MaxPool}` (float). TFLM requires
//! the int8 input's and output's scale and zero point to agree, so the int8 kernels
//! work on the raw values.
//!
//! Layouts: input `[batches, in_h, in_w, depth]`, output `[batches, out_h, out_w, depth]`.
//! Bindings of all four kernels: 0 input, 1 output (`i8` or `f32`).

use crate::binding_len::slice_bytes;
use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::{self, clamp_f32, need};
use core::mem::size_of;
use hal_core::kernel::KernelError;

/// A pooling window over NHWC data. Encoded as 12 words: `batches, input_height,
/// input_width, depth, output_height, output_width, filter_height, filter_width,
/// stride_height, stride_width, pad_height, pad_width` (the padding before the input,
/// from [`compute_padding_height_width`](crate::padding::compute_padding_height_width)
/// with dilation 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool2dShape {
    /// Batches.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Channels (input and output).
    pub depth: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Window height.
    pub filter_height: usize,
    /// Window width.
    pub filter_width: usize,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Rows of padding above the input.
    pub pad_height: usize,
    /// Columns of padding left of the input.
    pub pad_width: usize,
}

impl Pool2dShape {
    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend(
            [
                self.batches,
                self.input_height,
                self.input_width,
                self.depth,
                self.output_height,
                self.output_width,
                self.filter_height,
                self.filter_width,
                self.stride_height,
                self.stride_width,
                self.pad_height,
                self.pad_width,
            ]
            .map(|v| v as u32),
        );
    }

    fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let s = Self {
            batches: shape::dim(w)?,
            input_height: shape::dim(w)?,
            input_width: shape::dim(w)?,
            depth: shape::dim(w)?,
            output_height: shape::dim(w)?,
            output_width: shape::dim(w)?,
            filter_height: shape::dim(w)?,
            filter_width: shape::dim(w)?,
            stride_height: shape::dim(w)?,
            stride_width: shape::dim(w)?,
            pad_height: shape::count(w)?,
            pad_width: shape::count(w)?,
        };
        shape::product(&[s.batches, s.input_height, s.input_width, s.depth])?;
        shape::product(&[s.batches, s.output_height, s.output_width, s.depth])?;
        let reach = |out: usize, stride: usize, filter: usize| {
            (out as u64 - 1) * stride as u64 + filter as u64
        };
        if reach(s.output_height, s.stride_height, s.filter_height) > i32::MAX as u64
            || reach(s.output_width, s.stride_width, s.filter_width) > i32::MAX as u64
        {
            return Err(KernelError::Shape("window coordinates overflow i32"));
        }
        Ok(s)
    }

    /// Whether some output's window holds no input cell (TFLM's `AveragePool` then fails).
    pub fn has_empty_window(&self) -> bool {
        // Window origins grow with the output index: the first and last are the extremes.
        let empty = |out: usize, stride: usize, pad: usize, filter: usize, input: usize| {
            let first = -(pad as i64);
            let last = ((out - 1) * stride) as i64 - pad as i64;
            first + filter as i64 <= 0 || last >= input as i64
        };
        empty(
            self.output_height,
            self.stride_height,
            self.pad_height,
            self.filter_height,
            self.input_height,
        ) || empty(
            self.output_width,
            self.stride_width,
            self.pad_width,
            self.filter_width,
            self.input_width,
        )
    }

    fn check(&self, lens: &[usize], elem: usize) -> Result<(), KernelError> {
        need(
            lens,
            0,
            self.batches * self.input_height * self.input_width * self.depth,
            elem,
        )?;
        need(
            lens,
            1,
            self.batches * self.output_height * self.output_width * self.depth,
            elem,
        )
    }

    /// Checks the slices' lengths (elements of `T`), then runs [`run_loops`](Self::run_loops):
    /// per output element, `cell(acc, value)` for each window cell inside the input, then
    /// `finish(acc, count)` is the output.
    #[inline(always)]
    fn check_and_pool<T: Copy, A: Copy>(
        &self,
        input: &[T],
        output: &mut [T],
        init: A,
        mut cell: impl FnMut(&mut A, T),
        mut finish: impl FnMut(A, i32) -> T,
    ) -> Result<(), KernelError> {
        self.check(&[slice_bytes(input), slice_bytes(output)], size_of::<T>())?;
        self.run_loops(
            init,
            |acc, i| cell(acc, input[i]),
            |o, acc, count| output[o] = finish(acc, count),
        );
        Ok(())
    }

    /// TFLM's loop nest: per output element in order, `cell(acc, input_index)` for each
    /// window cell inside the input (rows, then columns), then `finish(output_index, acc,
    /// count)`.
    #[inline(always)]
    fn run_loops<A: Copy>(
        &self,
        init: A,
        mut cell: impl FnMut(&mut A, usize),
        mut finish: impl FnMut(usize, A, i32),
    ) {
        let (ih, iw, d) = (
            self.input_height as i32,
            self.input_width as i32,
            self.depth,
        );
        let mut o = 0;
        for b in 0..self.batches {
            for oy in 0..self.output_height {
                let y0 = (oy * self.stride_height) as i32 - self.pad_height as i32;
                let fy0 = (-y0).max(0);
                let fy1 = (self.filter_height as i32).min(ih - y0);
                for ox in 0..self.output_width {
                    let x0 = (ox * self.stride_width) as i32 - self.pad_width as i32;
                    let fx0 = (-x0).max(0);
                    let fx1 = (self.filter_width as i32).min(iw - x0);
                    let count = (fy1 - fy0).max(0) * (fx1 - fx0).max(0);
                    for c in 0..d {
                        let mut acc = init;
                        for fy in fy0..fy1 {
                            let row = (b * ih as usize + (y0 + fy) as usize) * iw as usize;
                            for fx in fx0..fx1 {
                                cell(&mut acc, (row + (x0 + fx) as usize) * d + c);
                            }
                        }
                        finish(o, acc, count);
                        o += 1;
                    }
                }
            }
        }
    }
}

macro_rules! pool_params {
    ($name:ident, $kernel:literal, $element:literal, $doc:literal, $t:ty, $range:ident, [$($eq:ident)?], $avg:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, $($eq)?)]
        pub struct $name {
            /// The window.
            pub shape: Pool2dShape,
            /// Lower clamp.
            pub act_min: $t,
            /// Upper clamp.
            pub act_max: $t,
        }

        impl KernelParams for $name {
            const KERNEL: &'static str = $kernel;
            const BINDINGS: &'static [BindingUse] =
                &[BindingUse::read($element), BindingUse::write($element)];

            fn encode(&self, out: &mut impl Extend<u32>) {
                self.shape.encode(out);
                out.extend([enc(self.act_min), enc(self.act_max)]);
            }

            fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
                let shape = Pool2dShape::decode(w)?;
                let (act_min, act_max) = shape::$range(w)?;
                if $avg && shape.has_empty_window() {
                    return Err(KernelError::Shape("average pool window outside the input"));
                }
                Ok(Self {
                    shape,
                    act_min,
                    act_max,
                })
            }
        }
    };
}

fn enc<T: Into<Word>>(v: T) -> u32 {
    v.into().0
}

struct Word(u32);

impl From<i32> for Word {
    fn from(v: i32) -> Self {
        Word(v as u32)
    }
}

impl From<f32> for Word {
    fn from(v: f32) -> Self {
        Word(v.to_bits())
    }
}

pool_params!(
    AveragePool2dS8,
    "average_pool2d_s8",
    1,
    "`average_pool2d_s8`: int8 average pooling. Words: [`Pool2dShape`]'s 12, `act_min`, \
     `act_max` (within int8). Decode refuses windows that miss the input entirely.",
    i32,
    act_range_s8,
    [Eq],
    true
);
pool_params!(
    AveragePool2dF32,
    "average_pool2d_f32",
    4,
    "`average_pool2d_f32`: float average pooling. Words: [`Pool2dShape`]'s 12, `act_min`, \
     `act_max` (`f32` bits). Decode refuses windows that miss the input entirely.",
    f32,
    act_range_f32,
    [],
    true
);
pool_params!(
    L2Pool2dF32,
    "l2_pool2d_f32",
    4,
    "`l2_pool2d_f32`: float L2 pooling (TFLM's reference `L2Pool`). Words: [`Pool2dShape`]'s \
     12, `act_min`, `act_max` (`f32` bits). Decode refuses windows that miss the input \
     entirely.",
    f32,
    act_range_f32,
    [],
    true
);
pool_params!(
    MaxPool2dS8,
    "max_pool2d_s8",
    1,
    "`max_pool2d_s8`: int8 max pooling. Words: [`Pool2dShape`]'s 12, `act_min`, `act_max`.",
    i32,
    act_range_s8,
    [Eq],
    false
);
pool_params!(
    MaxPool2dF32,
    "max_pool2d_f32",
    4,
    "`max_pool2d_f32`: float max pooling. Words: [`Pool2dShape`]'s 12, `act_min`, \
     `act_max` (`f32` bits).",
    f32,
    act_range_f32,
    [],
    false
);

impl AveragePool2dS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the pooling: the int32 sum of the window's cells inside the input, divided by
    /// their count rounding half away from zero (`(sum ± count/2) / count`, truncating),
    /// then clamped.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min, self.act_max);
        self.shape.check_and_pool(
            input,
            output,
            0i32,
            |acc, x| *acc = acc.wrapping_add(i32::from(x)),
            |acc, count| {
                // Decode refused empty windows, so `count >= 1`.
                let count = count.max(1);
                let avg = if acc > 0 {
                    acc.wrapping_add(count / 2) / count
                } else {
                    acc.wrapping_sub(count / 2) / count
                };
                avg.max(lo).min(hi) as i8
            },
        )
    }
}

impl AveragePool2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the pooling: the window's cells inside the input summed from 0 in row-major
    /// order, divided by their count, clamped.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min, self.act_max);
        self.shape.check_and_pool(
            input,
            output,
            0.0f32,
            |acc, x| *acc += x,
            |acc, count| clamp_f32(acc / count as f32, lo, hi),
        )
    }
}

impl L2Pool2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the pooling: the squares of the window's cells inside the input summed from 0
    /// in row-major order, divided by their count, the square root clamped.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min, self.act_max);
        self.shape.check_and_pool(
            input,
            output,
            0.0f32,
            |acc, x| *acc += x * x,
            |acc, count| clamp_f32(libm::sqrtf(acc / count as f32), lo, hi),
        )
    }
}

impl MaxPool2dS8 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the pooling: the largest cell inside the input (-128 where none is), clamped.
    pub fn run(&self, input: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min as i8, self.act_max as i8);
        self.shape.check_and_pool(
            input,
            output,
            i8::MIN,
            |m, x| *m = (*m).max(x),
            |m, _| m.max(lo).min(hi),
        )
    }
}

impl MaxPool2dF32 {
    /// Checks each binding's length in bytes against the parameters.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the pooling: starting from `f32::MIN`, each cell inside the input replaces the
    /// maximum where the maximum is below it (`std::max`'s comparison: NaN cells are
    /// skipped), then the clamp.
    pub fn run(&self, input: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        let (lo, hi) = (self.act_min, self.act_max);
        self.shape.check_and_pool(
            input,
            output,
            f32::MIN,
            |m, v| {
                if *m < v {
                    *m = v;
                }
            },
            |m, _| clamp_f32(m, lo, hi),
        )
    }
}
