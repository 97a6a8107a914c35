//! `TFLite_Detection_PostProcess` (the SSD models' custom op), as TFLM's
//! `detection_postprocess.cc` runs it: box encodings decoded against the anchors, then
//! non-max suppression (NMS), fast (each box's best class only) or regular (per class).
//!
//! - Decoding, per box, in `f64` then rounded to `f32`, TFLM's order:
//!   `ycenter = y / y_scale * anchor.h + anchor.y`,
//!   `half_h = 0.5 * exp(h / h_scale) * anchor.h` (likewise x, w),
//!   corners `ycenter ∓ half_h`, `xcenter ∓ half_w` in `f32`. Any box with `ymin >= ymax` or
//!   `xmin >= xmax` fails TFLM's invoke; here the op then reports no detection (all outputs
//!   zero).
//! - Single-class NMS: the scores `>= score_threshold` in box order, sorted by decreasing
//!   score, ties in box order (TFLM's stable merge sort, reproduced); greedy selection up to
//!   a cap, a candidate dropped when its IoU with a selected box is `> iou_threshold`
//!   (`std::max`/`std::min` as `a < b ? b : a`/`b < a ? b : a`; an empty box overlaps
//!   nothing).
//! - Fast NMS (`max_classes_per_detection` 1, the only form taken: TFLM writes more classes
//!   per box at stride `k²`, past its outputs): each box's best class (the first of the
//!   largest scores, `best < s ? s : best`), NMS of those scores capped at
//!   `max_detections`. TFLM leaves the output slots past the detections unwritten (stale
//!   bytes); here they are zero.
//! - Regular NMS: per class in order, NMS capped at `detections_per_class`; the class's
//!   picks join the best so far, which keep the first `max_detections` by decreasing score,
//!   ties to the earlier (TFLM's `std::partial_sort` with its index tie-break: both lists
//!   are already in that order, so a merge gives the same). Slots past the detections are
//!   zero, as in TFLM.
//!
//! Bindings of `detection_postprocess`: 0 box encodings `[num_boxes, box_stride]` (`f32`,
//! the first 4 of each row used: y, x, h, w), 1 class predictions `[num_boxes,
//! classes_with_background]` (`f32`), 2 anchors `[num_boxes, 4]` (`f32`: y, x, h, w), 3 the
//! workspace (32-bit words, written): the four outputs first ([`Layout`]), then scratch.

use crate::params::{BindingUse, KernelParams, Words};
use crate::shape::need;
use hal_core::kernel::KernelError;

/// TFLM's insertion-sort threshold in its merge sort.
const INSERTION_BELOW: usize = 20;

/// `detection_postprocess`. Words: `num_boxes`, `box_stride`, `num_classes`,
/// `classes_with_background`, `max_detections`, `detections_per_class`, `regular` (0 or
/// 1), then the bits of `score_threshold`, `iou_threshold`, `y_scale`, `x_scale`,
/// `h_scale`, `w_scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectionPostprocess {
    /// Boxes (anchors).
    pub num_boxes: usize,
    /// Floats per box encoding (at least 4).
    pub box_stride: usize,
    /// Classes, background excluded.
    pub num_classes: usize,
    /// Scores per box: `num_classes` or one more (a leading background class).
    pub classes_with_background: usize,
    /// Output slots.
    pub max_detections: usize,
    /// Regular NMS's cap per class (at least 1).
    pub detections_per_class: usize,
    /// Regular NMS, else fast.
    pub regular: bool,
    /// Scores below this are never candidates.
    pub score_threshold: f32,
    /// IoU above which a candidate is suppressed, in `(0, 1]`.
    pub iou_threshold: f32,
    /// Divisor of the encoded y.
    pub y_scale: f32,
    /// Divisor of the encoded x.
    pub x_scale: f32,
    /// Divisor of the encoded log-height.
    pub h_scale: f32,
    /// Divisor of the encoded log-width.
    pub w_scale: f32,
}

/// Where things live in the workspace, in 32-bit words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Detection boxes, `[max_detections, 4]` (ymin, xmin, ymax, xmax).
    pub boxes: usize,
    /// Detection classes, `[max_detections]` (as floats).
    pub classes: usize,
    /// Detection scores, `[max_detections]`.
    pub scores: usize,
    /// The number of detections, one float.
    pub count: usize,
    decoded: usize,
    one: usize,
    best: usize,
    keep: usize,
    keep_scores: usize,
    sorted: usize,
    merge: usize,
    active: usize,
    selected: usize,
    candidates: usize,
    candidate_scores: usize,
    top: usize,
    top_scores: usize,
    /// Words in all.
    pub words: usize,
}

impl Layout {
    fn new(num_boxes: usize, max_detections: usize) -> Option<Self> {
        let n = num_boxes;
        let d = max_detections;
        let mut at = 0usize;
        let mut take = |len: usize| -> Option<usize> {
            let start = at;
            at = at.checked_add(len)?;
            Some(start)
        };
        let boxes = take(d.checked_mul(4)?)?;
        let classes = take(d)?;
        let scores = take(d)?;
        let count = take(1)?;
        let decoded = take(n.checked_mul(4)?)?;
        let one = take(n)?;
        let best = take(n)?;
        let keep = take(n)?;
        let keep_scores = take(n)?;
        let sorted = take(n)?;
        let merge = take(n)?;
        let active = take(n)?;
        let selected = take(n)?;
        let candidates = take(d.checked_add(n)?)?;
        let candidate_scores = take(d.checked_add(n)?)?;
        let top = take(d)?;
        let top_scores = take(d)?;
        Some(Self {
            boxes,
            classes,
            scores,
            count,
            decoded,
            one,
            best,
            keep,
            keep_scores,
            sorted,
            merge,
            active,
            selected,
            candidates,
            candidate_scores,
            top,
            top_scores,
            words: at,
        })
    }
}

impl DetectionPostprocess {
    const WHAT: &'static str = "detection_postprocess: a zero or overflowing count, a box \
        stride below 4, classes with background other than num_classes or one more, or an \
        IoU threshold outside (0, 1]";

    /// Checks the parameters (TFLM's refusals at invoke, and counts that index in `u32`).
    pub fn validate(&self) -> Result<(), KernelError> {
        let layout = Layout::new(self.num_boxes, self.max_detections);
        let scores = self.num_boxes.checked_mul(self.classes_with_background);
        let encodings = self.num_boxes.checked_mul(self.box_stride);
        let fits = |n: Option<usize>| n.is_some_and(|n| n <= (i32::MAX / 4) as usize);
        let ok = self.num_boxes > 0
            && self.box_stride >= 4
            && self.num_classes > 0
            && (self.classes_with_background == self.num_classes
                || self.classes_with_background == self.num_classes + 1)
            && self.max_detections > 0
            && self.detections_per_class > 0
            && self.iou_threshold > 0.0
            && self.iou_threshold <= 1.0
            && fits(layout.map(|l| l.words))
            && fits(scores)
            && fits(encodings);
        if ok {
            Ok(())
        } else {
            Err(KernelError::Shape(Self::WHAT))
        }
    }

    /// The workspace's layout.
    pub fn layout(&self) -> Layout {
        // validate() made sure it exists; an empty layout otherwise never indexes.
        Layout::new(self.num_boxes, self.max_detections).unwrap_or(Layout {
            boxes: 0,
            classes: 0,
            scores: 0,
            count: 0,
            decoded: 0,
            one: 0,
            best: 0,
            keep: 0,
            keep_scores: 0,
            sorted: 0,
            merge: 0,
            active: 0,
            selected: 0,
            candidates: 0,
            candidate_scores: 0,
            top: 0,
            top_scores: 0,
            words: 0,
        })
    }

    /// The bindings hold what the parameters say.
    pub fn check(&self, binding_lens: &[usize]) -> Result<(), KernelError> {
        self.validate()?;
        need(binding_lens, 0, self.num_boxes * self.box_stride, 4)?;
        need(
            binding_lens,
            1,
            self.num_boxes * self.classes_with_background,
            4,
        )?;
        need(binding_lens, 2, self.num_boxes * 4, 4)?;
        need(binding_lens, 3, self.layout().words, 4)
    }

    /// Runs the op: the outputs and scratch into `workspace`.
    pub fn run(
        &self,
        encodings: &[f32],
        predictions: &[f32],
        anchors: &[f32],
        workspace: &mut [u32],
    ) -> Result<(), KernelError> {
        self.check(&[
            encodings.len() * 4,
            predictions.len() * 4,
            anchors.len() * 4,
            workspace.len() * 4,
        ])?;
        let l = self.layout();
        let ws = &mut workspace[..l.words];
        ws[..l.decoded].fill(0);
        if !self.decode_boxes(
            encodings,
            anchors,
            &mut ws[l.decoded..l.decoded + 4 * self.num_boxes],
        ) {
            return Ok(());
        }
        if self.regular {
            self.regular_nms(predictions, ws, &l);
        } else {
            self.fast_nms(predictions, ws, &l);
        }
        Ok(())
    }

    /// TFLM's `DecodeCenterSizeBoxes` into `decoded` (`[num_boxes, 4]` float bits); false
    /// where a box fails TFLM's `ValidateBoxes`.
    fn decode_boxes(&self, encodings: &[f32], anchors: &[f32], decoded: &mut [u32]) -> bool {
        let mut valid = true;
        let scale = [self.y_scale, self.x_scale, self.h_scale, self.w_scale].map(f64::from);
        for (i, out) in decoded.chunks_exact_mut(4).enumerate() {
            let e = &encodings[i * self.box_stride..i * self.box_stride + 4];
            let a = &anchors[i * 4..i * 4 + 4];
            let [y, x, h, w] = [e[0], e[1], e[2], e[3]].map(f64::from);
            let [ay, ax, ah, aw] = [a[0], a[1], a[2], a[3]].map(f64::from);
            let ycenter = (y / scale[0] * ah + ay) as f32;
            let xcenter = (x / scale[1] * aw + ax) as f32;
            let half_h = (0.5 * libm::exp(h / scale[2]) * ah) as f32;
            let half_w = (0.5 * libm::exp(w / scale[3]) * aw) as f32;
            let corners = [
                ycenter - half_h,
                xcenter - half_w,
                ycenter + half_h,
                xcenter + half_w,
            ];
            if corners[0] >= corners[2] || corners[1] >= corners[3] {
                valid = false;
            }
            for (o, c) in out.iter_mut().zip(corners) {
                *o = c.to_bits();
            }
        }
        valid
    }

    /// Fast NMS: each box's best class, then one NMS over those scores.
    fn fast_nms(&self, predictions: &[f32], ws: &mut [u32], l: &Layout) {
        let offset = self.classes_with_background - self.num_classes;
        for row in 0..self.num_boxes {
            let s = &predictions[row * self.classes_with_background + offset..][..self.num_classes];
            // std::partial_sort of one element: later indices replace it only when
            // strictly greater.
            let mut best = 0;
            for (c, &v) in s.iter().enumerate().skip(1) {
                if s[best] < v {
                    best = c;
                }
            }
            ws[l.one + row] = s[best].to_bits();
            ws[l.best + row] = best as u32;
        }
        let count = self.single_class_nms(ws, l, self.max_detections);
        for i in 0..count {
            let b = ws[l.selected + i] as usize;
            for k in 0..4 {
                ws[l.boxes + 4 * i + k] = ws[l.decoded + 4 * b + k];
            }
            ws[l.classes + i] = (ws[l.best + b] as f32).to_bits();
            ws[l.scores + i] = ws[l.one + b];
        }
        ws[l.count] = (count as f32).to_bits();
    }

    /// Regular NMS: per class, keeping the best `max_detections` over all classes.
    fn regular_nms(&self, predictions: &[f32], ws: &mut [u32], l: &Layout) {
        let cwb = self.classes_with_background;
        let offset = cwb - self.num_classes;
        let mut kept = 0;
        for col in 0..self.num_classes {
            for row in 0..self.num_boxes {
                ws[l.one + row] = predictions[row * cwb + col + offset].to_bits();
            }
            let picked = self.single_class_nms(ws, l, self.detections_per_class);
            for i in 0..picked {
                let b = ws[l.selected + i] as usize;
                ws[l.candidates + kept + i] = (b * cwb + col + offset) as u32;
                ws[l.candidate_scores + kept + i] = ws[l.one + b];
            }
            // Merge the best so far (positions 0..kept) with this class's picks (kept..),
            // both by decreasing score: ties to the earlier position.
            let total = kept + picked;
            let keep = total.min(self.max_detections);
            let (mut a, mut b) = (0, kept);
            for r in 0..keep {
                let take_b = a >= kept
                    || (b < total
                        && f32::from_bits(ws[l.candidate_scores + b])
                            > f32::from_bits(ws[l.candidate_scores + a]));
                let from = if take_b { &mut b } else { &mut a };
                ws[l.top + r] = ws[l.candidates + *from];
                ws[l.top_scores + r] = ws[l.candidate_scores + *from];
                *from += 1;
            }
            for r in 0..keep {
                ws[l.candidates + r] = ws[l.top + r];
                ws[l.candidate_scores + r] = ws[l.top_scores + r];
            }
            kept = keep;
        }
        for i in 0..kept {
            let index = ws[l.candidates + i] as usize;
            let anchor = index / cwb;
            let class = index - anchor * cwb - offset;
            for k in 0..4 {
                ws[l.boxes + 4 * i + k] = ws[l.decoded + 4 * anchor + k];
            }
            ws[l.classes + i] = (class as f32).to_bits();
            ws[l.scores + i] = ws[l.candidate_scores + i];
        }
        ws[l.count] = (kept as f32).to_bits();
    }

    /// TFLM's `NonMaxSuppressionSingleClassHelper` over the scores at `l.one`: the picked
    /// boxes at `l.selected`, at most `cap`; returns how many.
    fn single_class_nms(&self, ws: &mut [u32], l: &Layout, cap: usize) -> usize {
        let mut kept = 0;
        for i in 0..self.num_boxes {
            let s = ws[l.one + i];
            if f32::from_bits(s) >= self.score_threshold {
                ws[l.keep_scores + kept] = s;
                ws[l.keep + kept] = i as u32;
                kept += 1;
            }
        }
        for i in 0..kept {
            ws[l.sorted + i] = i as u32;
        }
        {
            let (head, tail) = ws.split_at_mut(l.sorted);
            let (sorted, rest) = tail.split_at_mut(l.merge - l.sorted);
            let scores = &head[l.keep_scores..l.keep_scores + kept];
            merge_sort(&mut sorted[..kept], &mut rest[..kept], scores);
        }
        let output_size = kept.min(cap);
        let mut picked = 0;
        let mut active = kept;
        ws[l.active..l.active + kept].fill(1);
        for i in 0..kept {
            if active == 0 || picked >= output_size {
                break;
            }
            if ws[l.active + i] == 0 {
                continue;
            }
            let bi = ws[l.keep + ws[l.sorted + i] as usize] as usize;
            ws[l.selected + picked] = bi as u32;
            picked += 1;
            ws[l.active + i] = 0;
            active -= 1;
            for j in i + 1..kept {
                if ws[l.active + j] == 1 {
                    let bj = ws[l.keep + ws[l.sorted + j] as usize] as usize;
                    if iou(&ws[l.decoded..], bi, bj) > self.iou_threshold {
                        ws[l.active + j] = 0;
                        active -= 1;
                    }
                }
            }
        }
        picked
    }
}

/// TFLM's `ComputeIntersectionOverUnion` of boxes `i` and `j` of `decoded`.
fn iou(decoded: &[u32], i: usize, j: usize) -> f32 {
    let corner = |b: usize, k: usize| f32::from_bits(decoded[4 * b + k]);
    let (ymin_i, xmin_i, ymax_i, xmax_i) = (corner(i, 0), corner(i, 1), corner(i, 2), corner(i, 3));
    let (ymin_j, xmin_j, ymax_j, xmax_j) = (corner(j, 0), corner(j, 1), corner(j, 2), corner(j, 3));
    let area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    let area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if area_i <= 0.0 || area_j <= 0.0 {
        return 0.0;
    }
    let max = |a: f32, b: f32| if a < b { b } else { a };
    let min = |a: f32, b: f32| if b < a { b } else { a };
    let iymin = max(ymin_i, ymin_j);
    let ixmin = max(xmin_i, xmin_j);
    let iymax = min(ymax_i, ymax_j);
    let ixmax = min(xmax_i, xmax_j);
    let intersection = max(iymax - iymin, 0.0) * max(ixmax - ixmin, 0.0);
    intersection / (area_i + area_j - intersection)
}

/// TFLM's `MergeSort` of the indices `v` by decreasing `values[v[i]]` (stable), in
/// `scratch` as long as `v`.
fn merge_sort(v: &mut [u32], scratch: &mut [u32], values: &[u32]) {
    let before =
        |a: u32, b: u32| f32::from_bits(values[a as usize]) > f32::from_bits(values[b as usize]);
    let n = v.len();
    if n < INSERTION_BELOW {
        // std::rotate(std::upper_bound(start, i, *i), i, i + 1).
        for i in 0..n {
            let x = v[i];
            let (mut first, mut len) = (0, i);
            while len > 0 {
                let half = len >> 1;
                let middle = first + half;
                if before(x, v[middle]) {
                    len = half;
                } else {
                    first = middle + 1;
                    len -= half + 1;
                }
            }
            v.copy_within(first..i, first + 1);
            v[first] = x;
        }
        return;
    }
    let half = n / 2;
    merge_sort(&mut v[..half], scratch, values);
    merge_sort(&mut v[half..], scratch, values);
    let (mut left, mut right) = (0, half);
    for out in scratch.iter_mut().take(n) {
        if left >= half || (right < n && before(v[right], v[left])) {
            *out = v[right];
            right += 1;
        } else {
            *out = v[left];
            left += 1;
        }
    }
    v.copy_from_slice(&scratch[..n]);
}

impl KernelParams for DetectionPostprocess {
    const KERNEL: &'static str = "detection_postprocess";
    const BINDINGS: &'static [BindingUse] = &[
        BindingUse::READ_32,
        BindingUse::READ_32,
        BindingUse::READ_32,
        BindingUse::WRITE_32,
    ];

    fn encode(&self, out: &mut impl Extend<u32>) {
        out.extend([
            self.num_boxes as u32,
            self.box_stride as u32,
            self.num_classes as u32,
            self.classes_with_background as u32,
            self.max_detections as u32,
            self.detections_per_class as u32,
            u32::from(self.regular),
            self.score_threshold.to_bits(),
            self.iou_threshold.to_bits(),
            self.y_scale.to_bits(),
            self.x_scale.to_bits(),
            self.h_scale.to_bits(),
            self.w_scale.to_bits(),
        ]);
    }

    fn decode(words: &mut Words<'_>) -> Result<Self, KernelError> {
        let p = Self {
            num_boxes: words.usize()?,
            box_stride: words.usize()?,
            num_classes: words.usize()?,
            classes_with_background: words.usize()?,
            max_detections: words.usize()?,
            detections_per_class: words.usize()?,
            regular: match words.u32()? {
                0 => false,
                1 => true,
                _ => return Err(KernelError::Shape(Self::WHAT)),
            },
            score_threshold: words.f32()?,
            iou_threshold: words.f32()?,
            y_scale: words.f32()?,
            x_scale: words.f32()?,
            h_scale: words.f32()?,
            w_scale: words.f32()?,
        };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn params(regular: bool, num_boxes: usize, max_detections: usize) -> DetectionPostprocess {
        DetectionPostprocess {
            num_boxes,
            box_stride: 4,
            num_classes: 2,
            classes_with_background: 3,
            max_detections,
            detections_per_class: 2,
            regular,
            score_threshold: 0.3,
            iou_threshold: 0.5,
            y_scale: 10.0,
            x_scale: 10.0,
            h_scale: 5.0,
            w_scale: 5.0,
        }
    }

    fn run(p: &DetectionPostprocess, enc: &[f32], pred: &[f32], anchors: &[f32]) -> Vec<f32> {
        let l = p.layout();
        let mut ws = vec![0xFFFF_FFFFu32; l.words];
        p.run(enc, pred, anchors, &mut ws).unwrap();
        ws[..=l.count].iter().map(|&w| f32::from_bits(w)).collect()
    }

    /// Three anchors: 0 and 1 overlap heavily, 2 apart.
    const ANCHORS: [f32; 12] = [
        0.5, 0.5, 0.2, 0.2, //
        0.51, 0.51, 0.2, 0.2, //
        0.1, 0.1, 0.1, 0.1,
    ];

    #[test]
    fn fast_nms_suppresses_overlaps_and_zeroes_the_rest() {
        let p = params(false, 3, 3);
        let enc = [0.0f32; 12];
        // Background, class 0, class 1.
        let pred = [
            0.9, 0.8, 0.1, //
            0.0, 0.7, 0.75, //
            0.0, 0.2, 0.6,
        ];
        let out = run(&p, &enc, &pred, &ANCHORS);
        // Box 0 (class 0, 0.8) suppresses box 1 (IoU ~0.9); box 2 (class 1, 0.6).
        assert_eq!(out[18], 2.0);
        assert_eq!(&out[12..15], &[0.0, 1.0, 0.0]);
        assert_eq!(&out[15..18], &[0.8, 0.6, 0.0]);
        assert!((out[0] - 0.4).abs() < 1e-6 && (out[2] - 0.6).abs() < 1e-6);
        assert_eq!(&out[8..12], &[0.0; 4]);
    }

    #[test]
    fn regular_nms_keeps_the_best_over_classes() {
        let p = params(true, 3, 2);
        let enc = [0.0f32; 12];
        let pred = [
            0.9, 0.8, 0.1, //
            0.0, 0.7, 0.75, //
            0.0, 0.2, 0.6,
        ];
        let out = run(&p, &enc, &pred, &ANCHORS);
        // Class 0: box 0 (0.8). Class 1: box 1 (0.75), box 2 (0.6). Best two: 0.8, 0.75.
        assert_eq!(out[12], 2.0);
        assert_eq!(&out[8..10], &[0.0, 1.0]);
        assert_eq!(&out[10..12], &[0.8, 0.75]);
    }

    #[test]
    fn ties_keep_box_order_and_invalid_boxes_give_nothing() {
        let p = params(false, 3, 3);
        let enc = [0.0f32; 12];
        let pred = [0.0, 0.5, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5, 0.5];
        let out = run(&p, &enc, &pred, &ANCHORS);
        assert_eq!(out[18], 2.0);
        assert_eq!(&out[12..15], &[0.0, 0.0, 0.0]);
        assert!((out[0] - 0.4).abs() < 1e-6);
        // A zero-height anchor fails TFLM's box check.
        let mut anchors = ANCHORS;
        anchors[2] = 0.0;
        let out = run(&p, &enc, &pred, &anchors);
        assert!(out.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn merge_sort_is_stable_and_decreasing() {
        for n in [0usize, 1, 5, 19, 20, 21, 57, 200] {
            let values: Vec<u32> = (0..n)
                .map(|i| (((i * 7919) % 13) as f32).to_bits())
                .collect();
            let mut v: Vec<u32> = (0..n as u32).collect();
            let mut scratch = vec![0; n];
            merge_sort(&mut v, &mut scratch, &values);
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by(|&a, &b| {
                f32::from_bits(values[b as usize])
                    .partial_cmp(&f32::from_bits(values[a as usize]))
                    .unwrap()
            });
            assert_eq!(v, want, "{n}");
        }
    }

    #[test]
    fn words_round_trip_and_refusals() {
        let p = params(true, 3, 2);
        let mut words = Vec::new();
        p.encode(&mut words);
        assert_eq!(DetectionPostprocess::decode(&mut Words::new(&words)), Ok(p));
        for bad in [
            DetectionPostprocess {
                iou_threshold: 0.0,
                ..p
            },
            DetectionPostprocess {
                iou_threshold: 1.5,
                ..p
            },
            DetectionPostprocess { box_stride: 3, ..p },
            DetectionPostprocess {
                classes_with_background: 4,
                ..p
            },
            DetectionPostprocess {
                max_detections: 0,
                ..p
            },
            DetectionPostprocess {
                num_boxes: usize::MAX / 2,
                ..p
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        let mut small = vec![0u32; p.layout().words - 1];
        assert!(p.run(&[0.0; 12], &[0.0; 9], &ANCHORS, &mut small).is_err());
    }
}
