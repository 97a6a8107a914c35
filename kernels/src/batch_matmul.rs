//! BATCH_MATMUL, as TFLM's `batch_matmul.cc` runs it (`reference_ops::BatchMatMul`): each
//! output matrix `[rows, cols]` of the broadcast batch is `lhs · rhs`, `lhs` `[rows, depth]`
//! (stored `[depth, rows]` where `adj_x`) and `rhs` `[depth, cols]` (stored `[cols, depth]`
//! where `adj_y`). TFLM transposes an operand into scratch where its layout asks for it;
//! these kernels read the operand in place through strides instead, the same products in
//! the same order.
//!
//! Up to three batch dimensions (ranks 2 to 5, shorter shapes extended with leading ones),
//! each broadcast where one side's is 1, as TFLM's. `batch_matmul_f32` sums each output's
//! products from `0.0` in `depth` order, as TFLM's loop does (bit for bit with it);
//! `batch_matmul_s8` sums `(rhs + rhs_offset) · (lhs + lhs_offset)` in wrapping int32, then
//! scales by one multiplier (TFLM's `FullyConnectedParams`, per tensor), offsets and clamps
//! to int8 (BATCH_MATMUL has no fused activation).
//!
//! Bindings of both: 0 lhs, 1 rhs, 2 output (`f32` or `i8` each).

use crate::binding_len::require;
use crate::params::{BindingUse, KernelParams, Words};
use crate::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
use hal_core::kernel::KernelError;

/// The batch dimensions a shape extends to (ranks up to 5).
pub const BATCH_DIMS: usize = 3;

/// The shapes of a batched matrix product. Words: `lhs_batch` (3), `rhs_batch` (3), `rows`,
/// `cols`, `depth`, `adj_x`, `adj_y`: 11 words. `decode` refuses zero dimensions, batch
/// dimensions that do not broadcast, flags other than 0 and 1 and element counts past
/// `u32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMatmulShape {
    /// The lhs's batch dimensions, extended with leading ones to 3.
    pub lhs_batch: [usize; BATCH_DIMS],
    /// The rhs's, likewise.
    pub rhs_batch: [usize; BATCH_DIMS],
    /// The output matrix's rows (the lhs's rows, its last dimension where `adj_x`).
    pub rows: usize,
    /// The output matrix's columns (the rhs's columns, its second-last dimension where
    /// `adj_y`).
    pub cols: usize,
    /// The summed dimension.
    pub depth: usize,
    /// The lhs is stored `[depth, rows]`.
    pub adj_x: bool,
    /// The rhs is stored `[cols, depth]`.
    pub adj_y: bool,
}

impl BatchMatmulShape {
    const WHAT: &'static str =
        "batch_matmul: zero or non-broadcasting dimensions, bad flags, or too many elements";

    /// The shape of a product of tensors shaped `lhs` and `rhs` (ranks 2 to 5), as TFLM's
    /// Prepare checks them: batch dimensions that broadcast and equal summed dimensions.
    pub fn new(
        lhs: &[usize],
        rhs: &[usize],
        adj_x: bool,
        adj_y: bool,
    ) -> Result<Self, KernelError> {
        let ranks = 2..=BATCH_DIMS + 2;
        if !ranks.contains(&lhs.len()) || !ranks.contains(&rhs.len()) {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let batch = |dims: &[usize]| {
            let mut out = [1; BATCH_DIMS];
            let lead = &dims[..dims.len() - 2];
            out[BATCH_DIMS - lead.len()..].copy_from_slice(lead);
            out
        };
        let (l0, l1) = (lhs[lhs.len() - 2], lhs[lhs.len() - 1]);
        let (r0, r1) = (rhs[rhs.len() - 2], rhs[rhs.len() - 1]);
        let (rows, lhs_depth) = if adj_x { (l1, l0) } else { (l0, l1) };
        let (rhs_depth, cols) = if adj_y { (r1, r0) } else { (r0, r1) };
        if lhs_depth != rhs_depth {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Self {
            lhs_batch: batch(lhs),
            rhs_batch: batch(rhs),
            rows,
            cols,
            depth: lhs_depth,
            adj_x,
            adj_y,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        let err = KernelError::Shape(Self::WHAT);
        for (l, r) in self.lhs_batch.iter().zip(&self.rhs_batch) {
            if *l == 0 || *r == 0 || (l != r && *l != 1 && *r != 1) {
                return Err(err);
            }
        }
        if self.rows == 0 || self.cols == 0 || self.depth == 0 {
            return Err(err);
        }
        // Every element count (and its f32 byte size) fits a u32, as a GPU indexes it.
        let fits = |count: Option<usize>| {
            count
                .and_then(|c| c.checked_mul(4))
                .is_some_and(|bytes| bytes <= u32::MAX as usize)
        };
        let batch =
            |dims: &[usize; BATCH_DIMS]| dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        let matrix = |a: usize, b: usize| a.checked_mul(b);
        let lhs = batch(&self.lhs_batch).zip(matrix(self.rows, self.depth));
        let rhs = batch(&self.rhs_batch).zip(matrix(self.depth, self.cols));
        let out = batch(&self.output_batch()).zip(matrix(self.rows, self.cols));
        for pair in [lhs, rhs, out] {
            if !fits(pair.and_then(|(b, m)| b.checked_mul(m))) {
                return Err(err);
            }
        }
        Ok(self)
    }

    /// The output's batch dimensions: each the larger of the two.
    pub fn output_batch(&self) -> [usize; BATCH_DIMS] {
        let mut out = [1; BATCH_DIMS];
        for (o, (l, r)) in out
            .iter_mut()
            .zip(self.lhs_batch.iter().zip(&self.rhs_batch))
        {
            *o = (*l).max(*r);
        }
        out
    }

    /// The output's shape for operands of ranks `lhs_rank` and `rhs_rank`: the broadcast
    /// batch dimensions of the longer, then `[rows, cols]`.
    pub fn output_shape(
        &self,
        lhs_rank: usize,
        rhs_rank: usize,
    ) -> ([usize; BATCH_DIMS + 2], usize) {
        let rank = lhs_rank.max(rhs_rank).clamp(2, BATCH_DIMS + 2);
        let batch = self.output_batch();
        let mut dims = [0; BATCH_DIMS + 2];
        dims[..BATCH_DIMS].copy_from_slice(&batch);
        dims[BATCH_DIMS] = self.rows;
        dims[BATCH_DIMS + 1] = self.cols;
        (dims, rank)
    }

    fn count(dims: &[usize; BATCH_DIMS]) -> usize {
        dims.iter().product()
    }

    /// Elements of the lhs, the rhs and the output.
    pub fn lens(&self) -> (usize, usize, usize) {
        (
            Self::count(&self.lhs_batch) * self.rows * self.depth,
            Self::count(&self.rhs_batch) * self.depth * self.cols,
            Self::count(&self.output_batch()) * self.rows * self.cols,
        )
    }

    /// Checks each binding's length in bytes, elements of `element` bytes.
    pub fn check(&self, binding_lens: &[usize], element: usize) -> Result<(), KernelError> {
        let (lhs, rhs, out) = self.lens();
        require(binding_lens, 0, lhs * element)?;
        require(binding_lens, 1, rhs * element)?;
        require(binding_lens, 2, out * element)
    }

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend(self.lhs_batch.iter().map(|&d| d as u32));
        out.extend(self.rhs_batch.iter().map(|&d| d as u32));
        out.extend([
            self.rows as u32,
            self.cols as u32,
            self.depth as u32,
            u32::from(self.adj_x),
            u32::from(self.adj_y),
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let mut lhs_batch = [0; BATCH_DIMS];
        for d in &mut lhs_batch {
            *d = words.usize()?;
        }
        let mut rhs_batch = [0; BATCH_DIMS];
        for d in &mut rhs_batch {
            *d = words.usize()?;
        }
        let (rows, cols, depth) = (words.usize()?, words.usize()?, words.usize()?);
        let flag = |w: u32| match w {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(KernelError::Shape(Self::WHAT)),
        };
        let adj_x = flag(words.u32()?)?;
        let adj_y = flag(words.u32()?)?;
        Self {
            lhs_batch,
            rhs_batch,
            rows,
            cols,
            depth,
            adj_x,
            adj_y,
        }
        .validate()
    }

    /// Calls `f(lhs_start, rhs_start, out_start)` for each output matrix in order: the
    /// element offsets of its operands' matrices (a broadcast dimension does not advance).
    fn each_matrix(
        &self,
        mut f: impl FnMut(usize, usize, usize) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        let out = self.output_batch();
        let (lhs_size, rhs_size) = (self.rows * self.depth, self.depth * self.cols);
        let out_size = self.rows * self.cols;
        let index = |dims: &[usize; BATCH_DIMS], b: [usize; BATCH_DIMS]| {
            (0..BATCH_DIMS).fold(0, |acc, i| {
                acc * dims[i] + if dims[i] == 1 { 0 } else { b[i] }
            })
        };
        let mut n = 0;
        for b0 in 0..out[0] {
            for b1 in 0..out[1] {
                for b2 in 0..out[2] {
                    let b = [b0, b1, b2];
                    f(
                        index(&self.lhs_batch, b) * lhs_size,
                        index(&self.rhs_batch, b) * rhs_size,
                        n * out_size,
                    )?;
                    n += 1;
                }
            }
        }
        Ok(())
    }

    /// The strides (in elements) of the lhs along rows and depth, and of the rhs along depth
    /// and columns.
    fn strides(&self) -> ((usize, usize), (usize, usize)) {
        let lhs = if self.adj_x {
            (1, self.rows)
        } else {
            (self.depth, 1)
        };
        let rhs = if self.adj_y {
            (1, self.depth)
        } else {
            (self.cols, 1)
        };
        (lhs, rhs)
    }

    /// Runs `dot(lhs_at, rhs_at, lhs_step, rhs_step)` for every output, in order.
    fn run<L: Copy, R: Copy, O>(
        &self,
        lhs: &[L],
        rhs: &[R],
        output: &mut [O],
        dot: impl Fn(&[L], &[R], usize, usize) -> O,
    ) -> Result<(), KernelError> {
        let (lens_l, lens_r, lens_o) = self.lens();
        if lhs.len() < lens_l || rhs.len() < lens_r || output.len() < lens_o {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let ((l_row, l_k), (r_k, r_col)) = self.strides();
        let (rows, cols, depth) = (self.rows, self.cols, self.depth);
        self.each_matrix(|l0, r0, o0| {
            for i in 0..rows {
                for j in 0..cols {
                    // The operands' first products and their steps along `depth`.
                    let l_at = l0 + i * l_row;
                    let r_at = r0 + j * r_col;
                    let l = lhs
                        .get(l_at..l_at + (depth - 1) * l_k + 1)
                        .ok_or(KernelError::Shape(Self::WHAT))?;
                    let r = rhs
                        .get(r_at..r_at + (depth - 1) * r_k + 1)
                        .ok_or(KernelError::Shape(Self::WHAT))?;
                    let slot = output
                        .get_mut(o0 + i * cols + j)
                        .ok_or(KernelError::Shape(Self::WHAT))?;
                    *slot = dot(l, r, l_k, r_k);
                }
            }
            Ok(())
        })
    }
}

/// `batch_matmul_f32`. Words: [`BatchMatmulShape`]'s 11.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMatmulF32 {
    /// The shapes.
    pub shape: BatchMatmulShape,
}

impl BatchMatmulF32 {
    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 4)
    }

    /// Runs the kernel: each output `0.0` plus its products in `depth` order.
    pub fn run(&self, lhs: &[f32], rhs: &[f32], output: &mut [f32]) -> Result<(), KernelError> {
        self.shape.run(lhs, rhs, output, |l, r, l_k, r_k| {
            let mut total = 0.0f32;
            for (x, y) in l.iter().step_by(l_k).zip(r.iter().step_by(r_k)) {
                total += *y * *x;
            }
            total
        })
    }
}

impl KernelParams for BatchMatmulF32 {
    const KERNEL: &'static str = "batch_matmul_f32";
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::READ_32,
        BindingUse::READ_32,
        BindingUse::WRITE_32,
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            shape: BatchMatmulShape::decode(words)?,
        })
    }
}

/// `batch_matmul_s8`. Words: [`BatchMatmulShape`]'s 11, then `lhs_offset`, `rhs_offset`,
/// `output_offset`, `multiplier`, `shift`. `decode` refuses offsets outside `-255..=255`,
/// a negative multiplier and a shift outside `-31..=30`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMatmulS8 {
    /// The shapes.
    pub shape: BatchMatmulShape,
    /// Minus the lhs's zero point (TFLM's `input_offset`).
    pub lhs_offset: i32,
    /// Minus the rhs's zero point (TFLM's `weights_offset`).
    pub rhs_offset: i32,
    /// The output's zero point.
    pub output_offset: i32,
    /// `lhs_scale · rhs_scale / output_scale` in fixed point.
    pub multiplier: i32,
    /// Its shift (left where positive).
    pub shift: i32,
}

impl BatchMatmulS8 {
    const WHAT: &'static str = "batch_matmul_s8: offsets, multiplier or shift out of range";

    /// The parameters TFLM's Prepare computes: the multiplier of
    /// `double(lhs_scale · rhs_scale) / double(output_scale)` (the scales' product in `f32`,
    /// as `GetQuantizedConvolutionMultipler` without a bias). Refuses scales that are not
    /// positive and finite and what `decode` refuses.
    pub fn prepare(
        shape: BatchMatmulShape,
        (lhs_scale, lhs_zero_point): (f32, i32),
        (rhs_scale, rhs_zero_point): (f32, i32),
        (output_scale, output_zero_point): (f32, i32),
    ) -> Result<Self, KernelError> {
        let positive = |scale: f32| scale > 0.0 && scale.is_finite();
        if ![lhs_scale, rhs_scale, output_scale]
            .into_iter()
            .all(positive)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        let real = f64::from(lhs_scale * rhs_scale) / f64::from(output_scale);
        let (multiplier, shift) = quantize_multiplier(real);
        Self {
            shape,
            lhs_offset: -lhs_zero_point,
            rhs_offset: -rhs_zero_point,
            output_offset: output_zero_point,
            multiplier,
            shift,
        }
        .validate()
    }

    fn validate(self) -> Result<Self, KernelError> {
        let offsets = -255..=255;
        if !offsets.contains(&self.lhs_offset)
            || !offsets.contains(&self.rhs_offset)
            || !offsets.contains(&self.output_offset)
            || self.multiplier < 0
            || !(-31..=30).contains(&self.shift)
        {
            return Err(KernelError::Shape(Self::WHAT));
        }
        Ok(self)
    }

    /// Checks each binding's length in bytes against the shape.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.shape.check(binding_lens, 1)
    }

    /// Runs the kernel.
    pub fn run(&self, lhs: &[i8], rhs: &[i8], output: &mut [i8]) -> Result<(), KernelError> {
        self.shape.run(lhs, rhs, output, |l, r, l_k, r_k| {
            let mut total = 0i32;
            for (x, y) in l.iter().step_by(l_k).zip(r.iter().step_by(r_k)) {
                let product = (i32::from(*y) + self.rhs_offset) * (i32::from(*x) + self.lhs_offset);
                total = total.wrapping_add(product);
            }
            let scaled = multiply_by_quantized_multiplier(total, self.multiplier, self.shift);
            (scaled + self.output_offset).clamp(-128, 127) as i8
        })
    }
}

impl KernelParams for BatchMatmulS8 {
    const KERNEL: &'static str = "batch_matmul_s8";
    const BINDINGS: &'static [BindingUse] =
        &[BindingUse::READ_8, BindingUse::READ_8, BindingUse::WRITE_8];

    fn encode(&self, out: &mut impl Extend<u32>) {
        self.shape.encode(out);
        out.extend([
            self.lhs_offset as u32,
            self.rhs_offset as u32,
            self.output_offset as u32,
            self.multiplier as u32,
            self.shift as u32,
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        Self {
            shape: BatchMatmulShape::decode(words)?,
            lhs_offset: words.i32()?,
            rhs_offset: words.i32()?,
            output_offset: words.i32()?,
            multiplier: words.i32()?,
            shift: words.i32()?,
        }
        .validate()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec;
    use std::vec::Vec;

    use super::*;

    /// The product the plain way: operands transposed first, as TFLM's scratch holds them.
    fn naive(lhs: &[f32], rhs: &[f32], s: &BatchMatmulShape) -> Vec<f32> {
        let out_batch = s.output_batch();
        let mut out = Vec::new();
        for b0 in 0..out_batch[0] {
            for b1 in 0..out_batch[1] {
                for b2 in 0..out_batch[2] {
                    let pick = |dims: [usize; 3]| {
                        let b = [b0, b1, b2];
                        (0..3).fold(0, |a, i| a * dims[i] + if dims[i] == 1 { 0 } else { b[i] })
                    };
                    let (lb, rb) = (pick(s.lhs_batch), pick(s.rhs_batch));
                    for i in 0..s.rows {
                        for j in 0..s.cols {
                            let mut t = 0.0f32;
                            for k in 0..s.depth {
                                let l = if s.adj_x {
                                    lhs[lb * s.rows * s.depth + k * s.rows + i]
                                } else {
                                    lhs[lb * s.rows * s.depth + i * s.depth + k]
                                };
                                let r = if s.adj_y {
                                    rhs[rb * s.depth * s.cols + j * s.depth + k]
                                } else {
                                    rhs[rb * s.depth * s.cols + k * s.cols + j]
                                };
                                t += r * l;
                            }
                            out.push(t);
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn products_with_adjoints_and_broadcasting() {
        // lhs [2, 1, 3, 2] (adj_x: 2 rows, depth 3), rhs [3, 4, 3] (adj_y: 4 cols).
        let lhs_dims = [2, 1, 3, 2];
        let rhs_dims = [3, 4, 3];
        let s = BatchMatmulShape::new(&lhs_dims, &rhs_dims, true, true).unwrap();
        assert_eq!(s.output_batch(), [1, 2, 3]);
        assert_eq!(s.output_shape(4, 3), ([1, 2, 3, 2, 4], 4));
        let lhs: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
        let rhs: Vec<f32> = (0..36).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut out = vec![0.0f32; 2 * 3 * 2 * 4];
        BatchMatmulF32 { shape: s }
            .run(&lhs, &rhs, &mut out)
            .unwrap();
        assert_eq!(out, naive(&lhs, &rhs, &s));
        for (ax, ay) in [(false, false), (false, true), (true, false)] {
            let l = if ax { [2, 1, 3, 2] } else { [2, 1, 2, 3] };
            let r = if ay { [3, 4, 3] } else { [3, 3, 4] };
            let s = BatchMatmulShape::new(&l, &r, ax, ay).unwrap();
            let mut out = vec![0.0f32; 48];
            BatchMatmulF32 { shape: s }
                .run(&lhs, &rhs, &mut out)
                .unwrap();
            assert_eq!(out, naive(&lhs, &rhs, &s));
        }
    }

    #[test]
    fn int8_as_tflm() {
        // [1, 2] · [2, 1]: (3 + 1)(2 - 2) + (5 + 1)(4 - 2) = 12; at scale 1 → 12 - 3.
        let s = BatchMatmulShape::new(&[1, 2], &[2, 1], false, false).unwrap();
        let p = BatchMatmulS8::prepare(s, (0.5, -1), (0.25, 2), (0.125, -3)).unwrap();
        let mut out = [0i8; 1];
        p.run(&[3, 5], &[2, 4], &mut out).unwrap();
        assert_eq!(out, [9]);
        // Saturates.
        let p = BatchMatmulS8::prepare(s, (1.0, 0), (1.0, 0), (0.01, 0)).unwrap();
        p.run(&[3, 5], &[2, 4], &mut out).unwrap();
        assert_eq!(out, [127]);
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 16);
        assert_eq!(BatchMatmulS8::decode(&mut Words::new(&words)), Ok(p));
        assert_eq!(BatchMatmulS8::KERNEL, "batch_matmul_s8");
    }

    #[test]
    fn words_round_trip_and_bad_words_are_refused() {
        let s = BatchMatmulShape::new(&[4, 3, 2, 5, 6], &[1, 6, 7], false, false).unwrap();
        let p = BatchMatmulF32 { shape: s };
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(words.len(), 11);
        assert_eq!(BatchMatmulF32::decode(&mut Words::new(&words)), Ok(p));
        let refused = |i: usize, v: u32| {
            let mut w = words.clone();
            w[i] = v;
            assert!(
                BatchMatmulF32::decode(&mut Words::new(&w)).is_err(),
                "word {i} = {v}"
            );
        };
        refused(0, 0); // a zero batch dimension
        refused(3, 3); // lhs batch 4 against rhs 3
        refused(6, 0); // zero rows
        refused(8, 0); // zero depth
        refused(9, 2); // a flag not 0 or 1
        refused(7, u32::MAX); // too many elements
        assert!(BatchMatmulF32::decode(&mut Words::new(&words[..10])).is_err());
        let q = BatchMatmulS8::prepare(s, (0.5, 0), (0.5, 0), (0.5, 0)).unwrap();
        let mut words = Vec::new();
        q.encode(&mut words);
        for (i, v) in [
            (11, 256u32),
            (13, (-256i32) as u32),
            (14, (-1i32) as u32),
            (15, 31),
        ] {
            let mut w = words.clone();
            w[i] = v;
            assert!(
                BatchMatmulS8::decode(&mut Words::new(&w)).is_err(),
                "word {i}"
            );
        }
        // Shapes that do not multiply or broadcast.
        assert!(BatchMatmulShape::new(&[2, 3], &[4, 5], false, false).is_err());
        assert!(BatchMatmulShape::new(&[2, 2, 3], &[3, 3, 5], false, false).is_err());
        assert!(BatchMatmulShape::new(&[3], &[3, 5], false, false).is_err());
        assert!(BatchMatmulShape::new(&[1, 1, 1, 1, 2, 3], &[3, 5], false, false).is_err());
    }

    #[test]
    fn short_bindings_are_refused() {
        let s = BatchMatmulShape::new(&[2, 2, 3], &[3, 4], false, false).unwrap();
        let p = BatchMatmulF32 { shape: s };
        assert!(p.check(&[48, 48, 64]).is_ok());
        assert!(p.check(&[44, 48, 64]).is_err());
        assert!(p.check(&[48, 48]).is_err());
        let mut out = [0.0f32; 15];
        assert!(p.run(&[0.0; 12], &[0.0; 12], &mut out).is_err());
    }
}
