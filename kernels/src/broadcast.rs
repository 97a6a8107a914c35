//! TFLite's broadcasting of two inputs to one output (TFLM's `BroadcastBinaryOpSimple`),
//! shared by ADD and MUL: shapes right-aligned, a dimension of 1 repeats.

use crate::binding_len::slice_bytes;
use crate::params::Words;
use crate::row_major::for_each_row;
use crate::shape::{self, need};
use core::mem::size_of;
use hal_core::kernel::KernelError;

/// The largest rank broadcasting kernels take (TFLM's 6-D broadcast ops).
pub const MAX_RANK: usize = 6;

/// Two inputs' shapes, right-aligned and extended to [`MAX_RANK`] with leading 1s. Each
/// dimension pair is equal or has a 1; the output's dimension is the larger. Encoded as 12
/// words: `input1`'s six dimensions, then `input2`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BroadcastShape {
    /// Input 1's dimensions, outermost first.
    pub input1: [usize; MAX_RANK],
    /// Input 2's dimensions, outermost first.
    pub input2: [usize; MAX_RANK],
}

impl BroadcastShape {
    /// The shape from the two inputs' TFLite shapes (rank up to [`MAX_RANK`]); refuses
    /// shapes that do not broadcast or whose sizes overflow.
    pub fn new(input1: &[usize], input2: &[usize]) -> Result<Self, KernelError> {
        let extend = |dims: &[usize]| -> Result<[usize; MAX_RANK], KernelError> {
            let pad = MAX_RANK
                .checked_sub(dims.len())
                .ok_or(KernelError::Shape("rank above 6"))?;
            let mut out = [1; MAX_RANK];
            out[pad..].copy_from_slice(dims);
            Ok(out)
        };
        let s = Self {
            input1: extend(input1)?,
            input2: extend(input2)?,
        };
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), KernelError> {
        for (&a, &b) in self.input1.iter().zip(&self.input2) {
            if a == 0 || b == 0 || a > shape::MAX_DIM || b > shape::MAX_DIM {
                return Err(KernelError::Shape("dimension zero or above i32::MAX"));
            }
            if a != b && a != 1 && b != 1 {
                return Err(KernelError::Shape("shapes do not broadcast"));
            }
        }
        shape::product(&self.input1)?;
        shape::product(&self.input2)?;
        shape::product(&self.output())?;
        Ok(())
    }

    /// The output's dimensions.
    pub fn output(&self) -> [usize; MAX_RANK] {
        core::array::from_fn(|i| self.input1[i].max(self.input2[i]))
    }

    pub(crate) fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend(self.input1.iter().chain(&self.input2).map(|&d| d as u32));
    }

    pub(crate) fn decode(w: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut s = Self {
            input1: [0; MAX_RANK],
            input2: [0; MAX_RANK],
        };
        for d in s.input1.iter_mut().chain(s.input2.iter_mut()) {
            *d = w.usize()?;
        }
        s.validate()?;
        Ok(s)
    }

    /// Checks bindings 0 (input 1), 1 (input 2) and 2 (output) of `elem`-byte elements.
    pub(crate) fn check(&self, lens: &[usize], elem: usize) -> Result<(), KernelError> {
        let n = |d: &[usize; MAX_RANK]| d.iter().product::<usize>();
        need(lens, 0, n(&self.input1), elem)?;
        need(lens, 1, n(&self.input2), elem)?;
        need(lens, 2, n(&self.output()), elem)
    }

    /// Elements of the output.
    pub fn len(&self) -> usize {
        self.output().iter().product()
    }

    /// Whether the output has no elements (never, for decoded parameters).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether nothing is broadcast: both inputs and the output have one shape, and
    /// element `i` of each goes with element `i` of the others.
    pub fn is_elementwise(&self) -> bool {
        self.input1 == self.input2
    }

    /// Sets every output element to `f` of its two input elements, broadcasting as the
    /// shape says. Without broadcasting, element `i` of each goes with element `i` of the
    /// others: a plain zip, none of the index arithmetic. Callers have checked the slices'
    /// lengths against the shape.
    #[inline(always)]
    pub(crate) fn apply<T: Copy, O>(
        &self,
        input1: &[T],
        input2: &[T],
        output: &mut [O],
        f: impl Fn(T, T) -> O,
    ) {
        if self.is_elementwise() {
            for ((o, a), b) in output.iter_mut().zip(input1).zip(input2).take(self.len()) {
                *o = f(*a, *b);
            }
            return;
        }
        self.for_each(|o, a, b| output[o] = f(input1[a], input2[b]));
    }

    /// Sets every output element to `f` of its two inputs' indices, broadcasting as the
    /// shape says (for kernels that read their inputs as bytes). Callers have checked the
    /// lengths against the shape.
    #[inline(always)]
    pub(crate) fn apply_indices<O>(&self, output: &mut [O], f: impl Fn(usize, usize) -> O) {
        if self.is_elementwise() {
            for (e, o) in output.iter_mut().enumerate().take(self.len()) {
                *o = f(e, e);
            }
            return;
        }
        self.for_each(|o, a, b| output[o] = f(a, b));
    }

    /// The indices into input 1 and input 2 of output element `e` (below [`len`](Self::len)),
    /// for a kernel that computes its output elements one at a time.
    pub fn input_indices(&self, e: usize) -> (usize, usize) {
        let (mut rest, mut a, mut b) = (e, 0, 0);
        let (mut stride_a, mut stride_b) = (1, 1);
        for i in (0..MAX_RANK).rev() {
            let (da, db) = (self.input1[i], self.input2[i]);
            let d = da.max(db);
            let idx = rest % d;
            rest /= d;
            if da != 1 {
                a += idx * stride_a;
            }
            if db != 1 {
                b += idx * stride_b;
            }
            stride_a *= da;
            stride_b *= db;
        }
        (a, b)
    }

    /// [`check`](Self::check)s the slices' lengths (elements of `T`), then
    /// [`apply`](Self::apply)s `f`: a binary kernel's `run`.
    #[inline(always)]
    pub(crate) fn check_and_apply<T: Copy>(
        &self,
        input1: &[T],
        input2: &[T],
        output: &mut [T],
        f: impl Fn(T, T) -> T,
    ) -> Result<(), KernelError> {
        let lens = [
            slice_bytes(input1),
            slice_bytes(input2),
            slice_bytes(output),
        ];
        self.check(&lens, size_of::<T>())?;
        self.apply(input1, input2, output, f);
        Ok(())
    }

    /// Calls `f(output_index, input1_index, input2_index)` for every output element in
    /// order.
    #[inline(always)]
    fn for_each(&self, mut f: impl FnMut(usize, usize, usize)) {
        let out = self.output();
        let mut sa = [0usize; MAX_RANK];
        let mut sb = [0usize; MAX_RANK];
        let (mut acc_a, mut acc_b) = (1usize, 1usize);
        for i in (0..MAX_RANK).rev() {
            sa[i] = if self.input1[i] == 1 { 0 } else { acc_a };
            sb[i] = if self.input2[i] == 1 { 0 } else { acc_b };
            acc_a *= self.input1[i];
            acc_b *= self.input2[i];
        }
        let last = MAX_RANK - 1;
        let mut o = 0;
        for_each_row(&out, last, |idx| {
            let base_a: usize = (0..last).map(|d| idx[d] * sa[d]).sum();
            let base_b: usize = (0..last).map(|d| idx[d] * sb[d]).sum();
            for k in 0..out[last] {
                f(o, base_a + k * sa[last], base_b + k * sb[last]);
                o += 1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `input_indices` of every output element is the pair the row walk gives it.
    #[test]
    fn input_indices_follow_the_row_walk() {
        let shapes: &[(&[usize], &[usize])] = &[
            (&[2, 3], &[2, 3]),
            (&[4, 1, 3], &[5, 1]),
            (&[1, 4], &[3, 1]),
            (&[2, 1, 3, 1, 2, 1], &[1, 3, 1, 2, 1, 2]),
            (&[7], &[1]),
            (&[1], &[2, 2]),
        ];
        for (a, b) in shapes {
            let shape = BroadcastShape::new(a, b).unwrap();
            let mut seen = 0;
            shape.for_each(|o, ia, ib| {
                assert_eq!(shape.input_indices(o), (ia, ib), "{a:?} {b:?} at {o}");
                seen += 1;
            });
            assert_eq!(seen, shape.len());
        }
    }
}
