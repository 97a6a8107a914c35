//! The cases' values: a small deterministic generator, the same on every core and run, and
//! the shapes the int8 weighted ops share (windows, output stages).

use crate::padding::Window;
use alloc::vec::Vec;

/// Marsaglia's xorshift32: the cases' values, the same on every run.
pub struct Rng(pub u32);

impl Rng {
    /// The next value.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next() % ((hi - lo) as u32 + 1)) as i32
    }

    /// A count in `lo..=hi`.
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as i32, hi as i32) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: u32) -> bool {
        self.next() % n == 0
    }

    /// `n` values as int8.
    pub fn bytes(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.next() as i8).collect()
    }

    /// An input offset (`-input_zero_point`): often 0 (folded into the bias at import),
    /// sometimes an end of its range.
    pub fn input_offset(&mut self) -> i32 {
        match self.next() % 4 {
            0 => 0,
            1 => *[-127, 128, 1, -1].get(self.size(0, 3)).unwrap_or(&0),
            _ => self.range(-127, 128),
        }
    }

    /// The output stage's words: biases, multipliers, shifts (`n` each), output offset,
    /// clamp.
    pub fn stage(&mut self, n: usize, bias_span: i32) -> Stage {
        let (lo, hi) = if self.one_in(2) {
            (-128, 127)
        } else {
            let a = self.range(-128, 127);
            let b = self.range(-128, 127);
            (a.min(b), a.max(b))
        };
        Stage {
            bias: (0..n)
                .map(|_| {
                    if self.one_in(20) {
                        i32::MAX - self.range(0, 1000)
                    } else {
                        self.range(-bias_span, bias_span)
                    }
                })
                .collect(),
            multipliers: (0..n)
                .map(|_| match self.next() % 16 {
                    0 => *[0, 1 << 30, i32::MAX].get(self.size(0, 2)).unwrap_or(&0),
                    _ => (1 << 30) + (self.next() >> 2) as i32,
                })
                .collect(),
            // Half the stages right shifts alone (the tuned kernels' lean stage), the
            // others with left shifts and the extremes among them.
            shifts: if self.one_in(2) {
                (0..n)
                    .map(|_| match self.next() % 16 {
                        0 => *[-31, -1].get(self.size(0, 1)).unwrap_or(&-1),
                        _ => self.range(-12, -1),
                    })
                    .collect()
            } else {
                (0..n)
                    .map(|_| match self.next() % 16 {
                        0 => *[-31, 30, 0].get(self.size(0, 2)).unwrap_or(&0),
                        _ => self.range(-12, 1),
                    })
                    .collect()
            },
            output_offset: self.range(-128, 127),
            act_min: lo,
            act_max: hi,
        }
    }
}

/// An int8 weighted op's bias and requantization bindings and words.
pub struct Stage {
    /// Biases, one per channel.
    pub bias: Vec<i32>,
    /// Requantization multipliers, one per channel (or one, per tensor).
    pub multipliers: Vec<i32>,
    /// Requantization shifts, as many as the multipliers.
    pub shifts: Vec<i32>,
    /// `output_zero_point`.
    pub output_offset: i32,
    /// Lower clamp.
    pub act_min: i32,
    /// Upper clamp.
    pub act_max: i32,
}

/// A window whose output is at least one pixel: strides 1 or 2, dilation mostly 1,
/// padding up to the filter's reach.
pub fn window(rng: &mut Rng, fh: usize, fw: usize) -> Window {
    let dil = |rng: &mut Rng| if rng.one_in(5) { 2 } else { 1 };
    let (dh, dw) = (dil(rng), dil(rng));
    Window {
        stride_height: rng.size(1, 2),
        stride_width: rng.size(1, 2),
        dilation_height: dh,
        dilation_width: dw,
        pad_height: if rng.one_in(2) {
            0
        } else {
            rng.size(0, (fh - 1) * dh)
        },
        pad_width: if rng.one_in(2) {
            0
        } else {
            rng.size(0, (fw - 1) * dw)
        },
    }
}

/// Output size along one axis (TFLM's loops take it as given; this is VALID's formula over
/// the padded input), or `None` where no output fits.
fn out_size(
    input: usize,
    pad: usize,
    filter: usize,
    dilation: usize,
    stride: usize,
) -> Option<usize> {
    let reach = (filter - 1) * dilation + 1;
    let padded = input + 2 * pad;
    (padded >= reach).then(|| (padded - reach) / stride + 1)
}

/// The output's `(height, width)` for an input of `input` and a filter of `filter` under
/// `window`, or `None` where no output fits.
pub fn output_size(
    window: &Window,
    input: (usize, usize),
    filter: (usize, usize),
) -> Option<(usize, usize)> {
    let height = out_size(
        input.0,
        window.pad_height,
        filter.0,
        window.dilation_height,
        window.stride_height,
    )?;
    let width = out_size(
        input.1,
        window.pad_width,
        filter.1,
        window.dilation_width,
        window.stride_width,
    )?;
    Some((height, width))
}
