// detection_postprocess: ember-kernels' `DetectionPostprocess` (TFLM's
// TFLite_Detection_PostProcess custom op): boxes decoded against the anchors, then fast or
// regular non-max suppression, the four outputs and the scratch in one workspace binding
// (`Layout` in ember-kernels). The NMS is sequential: invocation 0 of workgroup 0 does all
// of it; every other invocation returns at once.
//
// Against the reference: the decoding runs in f32 (TFLM and the reference in f64, rounded
// to f32 once) with hal-local's `exp_f32` and the correctly rounded `div_rn`, so corners
// differ by a few ulp at most; everything after (thresholds, the stable sort by score, IoU
// with `div_rn`, the merge over classes) is the reference's, comparison for comparison. A
// selection can differ only where an IoU lands within those ulp of the threshold.
//
// Parameter words: 0 num_boxes, 1 box_stride, 2 num_classes, 3 classes_with_background,
// 4 max_detections, 5 detections_per_class, 6 regular, 7 score_threshold, 8 iou_threshold,
// 9 y_scale, 10 x_scale, 11 h_scale, 12 w_scale (float bits).

@group(0) @binding(0) var<storage, read> encodings: array<f32>;
@group(0) @binding(1) var<storage, read> predictions: array<f32>;
@group(0) @binding(2) var<storage, read> anchors: array<f32>;
@group(0) @binding(3) var<storage, read_write> ws: array<u32>;

var<private> num_boxes: u32;
var<private> score_threshold: f32;
var<private> iou_threshold: f32;
// Word offsets into `ws`, as the reference's `Layout` (the binding's base added).
var<private> l_boxes: u32;
var<private> l_classes: u32;
var<private> l_scores: u32;
var<private> l_count: u32;
var<private> l_decoded: u32;
var<private> l_one: u32;
var<private> l_best: u32;
var<private> l_keep: u32;
var<private> l_keep_scores: u32;
var<private> l_sorted: u32;
var<private> l_merge: u32;
var<private> l_active: u32;
var<private> l_selected: u32;
var<private> l_candidates: u32;
var<private> l_candidate_scores: u32;
var<private> l_top: u32;
var<private> l_top_scores: u32;

fn f(w: u32) -> f32 {
    return bitcast<f32>(w);
}

// std::max and std::min on floats.
fn std_max(a: f32, b: f32) -> f32 {
    return select(a, b, a < b);
}

fn std_min(a: f32, b: f32) -> f32 {
    return select(a, b, b < a);
}

fn corner(b: u32, k: u32) -> f32 {
    return f(ws[l_decoded + 4u * b + k]);
}

// TFLM's ComputeIntersectionOverUnion.
fn iou(i: u32, j: u32) -> f32 {
    let area_i = (corner(i, 2u) - corner(i, 0u)) * (corner(i, 3u) - corner(i, 1u));
    let area_j = (corner(j, 2u) - corner(j, 0u)) * (corner(j, 3u) - corner(j, 1u));
    if area_i <= 0.0 || area_j <= 0.0 {
        return 0.0;
    }
    let iymin = std_max(corner(i, 0u), corner(j, 0u));
    let ixmin = std_max(corner(i, 1u), corner(j, 1u));
    let iymax = std_min(corner(i, 2u), corner(j, 2u));
    let ixmax = std_min(corner(i, 3u), corner(j, 3u));
    let intersection = std_max(iymax - iymin, 0.0) * std_max(ixmax - ixmin, 0.0);
    return div_rn(intersection, area_i + area_j - intersection);
}

// Decodes every box; false where one fails TFLM's ValidateBoxes.
fn decode_boxes() -> bool {
    let stride = param(1u);
    let y_scale = bitcast<f32>(param(9u));
    let x_scale = bitcast<f32>(param(10u));
    let h_scale = bitcast<f32>(param(11u));
    let w_scale = bitcast<f32>(param(12u));
    let e0 = base_word(0u);
    let a0 = base_word(2u);
    var valid = true;
    for (var i = 0u; i < num_boxes; i++) {
        let e = e0 + i * stride;
        let a = a0 + i * 4u;
        let ah = anchors[a + 2u];
        let aw = anchors[a + 3u];
        let ycenter = div_rn(encodings[e], y_scale) * ah + anchors[a];
        let xcenter = div_rn(encodings[e + 1u], x_scale) * aw + anchors[a + 1u];
        let half_h = 0.5f * exp_f32(div_rn(encodings[e + 2u], h_scale)) * ah;
        let half_w = 0.5f * exp_f32(div_rn(encodings[e + 3u], w_scale)) * aw;
        let ymin = ycenter - half_h;
        let xmin = xcenter - half_w;
        let ymax = ycenter + half_h;
        let xmax = xcenter + half_w;
        if ymin >= ymax || xmin >= xmax {
            valid = false;
        }
        let d = l_decoded + 4u * i;
        ws[d] = bitcast<u32>(ymin);
        ws[d + 1u] = bitcast<u32>(xmin);
        ws[d + 2u] = bitcast<u32>(ymax);
        ws[d + 3u] = bitcast<u32>(xmax);
    }
    return valid;
}

// Whether kept index `a` sorts before `b`: a strictly larger score.
fn before(a: u32, b: u32) -> bool {
    return f(ws[l_keep_scores + a]) > f(ws[l_keep_scores + b]);
}

// The indices 0..kept at `l_sorted` by decreasing kept score, ties in order (a stable
// bottom-up merge sort: the kept scores are never NaN, so any stable sort is TFLM's).
fn sort_kept(kept: u32) {
    for (var i = 0u; i < kept; i++) {
        ws[l_sorted + i] = i;
    }
    var src = l_sorted;
    var dst = l_merge;
    for (var width = 1u; width < kept; width *= 2u) {
        for (var lo = 0u; lo < kept; lo += 2u * width) {
            let mid = min(lo + width, kept);
            let hi = min(lo + 2u * width, kept);
            var a = lo;
            var b = mid;
            for (var k = lo; k < hi; k++) {
                if a >= mid || (b < hi && before(ws[src + b], ws[src + a])) {
                    ws[dst + k] = ws[src + b];
                    b++;
                } else {
                    ws[dst + k] = ws[src + a];
                    a++;
                }
            }
        }
        let t = src;
        src = dst;
        dst = t;
    }
    if src != l_sorted {
        for (var i = 0u; i < kept; i++) {
            ws[l_sorted + i] = ws[src + i];
        }
    }
}

// TFLM's NonMaxSuppressionSingleClassHelper over the scores at `l_one`: the picked boxes
// at `l_selected`, at most `cap`; returns how many.
fn single_class_nms(cap: u32) -> u32 {
    var kept = 0u;
    for (var i = 0u; i < num_boxes; i++) {
        let s = ws[l_one + i];
        if f(s) >= score_threshold {
            ws[l_keep_scores + kept] = s;
            ws[l_keep + kept] = i;
            kept++;
        }
    }
    sort_kept(kept);
    let output_size = min(kept, cap);
    var picked = 0u;
    var live = kept;
    for (var i = 0u; i < kept; i++) {
        ws[l_active + i] = 1u;
    }
    for (var i = 0u; i < kept; i++) {
        if live == 0u || picked >= output_size {
            break;
        }
        if ws[l_active + i] == 0u {
            continue;
        }
        let bi = ws[l_keep + ws[l_sorted + i]];
        ws[l_selected + picked] = bi;
        picked++;
        ws[l_active + i] = 0u;
        live--;
        for (var j = i + 1u; j < kept; j++) {
            if ws[l_active + j] == 1u {
                let bj = ws[l_keep + ws[l_sorted + j]];
                if iou(bi, bj) > iou_threshold {
                    ws[l_active + j] = 0u;
                    live--;
                }
            }
        }
    }
    return picked;
}

fn copy_box(slot: u32, b: u32) {
    for (var k = 0u; k < 4u; k++) {
        ws[l_boxes + 4u * slot + k] = ws[l_decoded + 4u * b + k];
    }
}

fn fast_nms() {
    let num_classes = param(2u);
    let cwb = param(3u);
    let offset = cwb - num_classes;
    let p0 = base_word(1u);
    for (var row = 0u; row < num_boxes; row++) {
        let s = p0 + row * cwb + offset;
        var best = 0u;
        for (var c = 1u; c < num_classes; c++) {
            if predictions[s + best] < predictions[s + c] {
                best = c;
            }
        }
        ws[l_one + row] = bitcast<u32>(predictions[s + best]);
        ws[l_best + row] = best;
    }
    let count = single_class_nms(param(4u));
    for (var i = 0u; i < count; i++) {
        let b = ws[l_selected + i];
        copy_box(i, b);
        ws[l_classes + i] = bitcast<u32>(f32(ws[l_best + b]));
        ws[l_scores + i] = ws[l_one + b];
    }
    ws[l_count] = bitcast<u32>(f32(count));
}

fn regular_nms() {
    let num_classes = param(2u);
    let cwb = param(3u);
    let max_detections = param(4u);
    let per_class = param(5u);
    let offset = cwb - num_classes;
    let p0 = base_word(1u);
    var kept = 0u;
    for (var col = 0u; col < num_classes; col++) {
        for (var row = 0u; row < num_boxes; row++) {
            ws[l_one + row] = bitcast<u32>(predictions[p0 + row * cwb + col + offset]);
        }
        let picked = single_class_nms(per_class);
        for (var i = 0u; i < picked; i++) {
            let b = ws[l_selected + i];
            ws[l_candidates + kept + i] = b * cwb + col + offset;
            ws[l_candidate_scores + kept + i] = ws[l_one + b];
        }
        let total = kept + picked;
        let keep = min(total, max_detections);
        var a = 0u;
        var b = kept;
        for (var r = 0u; r < keep; r++) {
            var src = a;
            if a >= kept || (b < total
                && f(ws[l_candidate_scores + b]) > f(ws[l_candidate_scores + a])) {
                src = b;
                b++;
            } else {
                a++;
            }
            ws[l_top + r] = ws[l_candidates + src];
            ws[l_top_scores + r] = ws[l_candidate_scores + src];
        }
        for (var r = 0u; r < keep; r++) {
            ws[l_candidates + r] = ws[l_top + r];
            ws[l_candidate_scores + r] = ws[l_top_scores + r];
        }
        kept = keep;
    }
    for (var i = 0u; i < kept; i++) {
        let index = ws[l_candidates + i];
        let anchor = index / cwb;
        copy_box(i, anchor);
        ws[l_classes + i] = bitcast<u32>(f32(index - anchor * cwb - offset));
        ws[l_scores + i] = ws[l_candidate_scores + i];
    }
    ws[l_count] = bitcast<u32>(f32(kept));
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) id: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    if id.x != 0u || id.y != 0u || id.z != 0u || lane != 0u {
        return;
    }
    num_boxes = param(0u);
    score_threshold = bitcast<f32>(param(7u));
    iou_threshold = bitcast<f32>(param(8u));
    let n = num_boxes;
    let d = param(4u);
    let w0 = base_word(3u);
    l_boxes = w0;
    l_classes = l_boxes + 4u * d;
    l_scores = l_classes + d;
    l_count = l_scores + d;
    l_decoded = l_count + 1u;
    l_one = l_decoded + 4u * n;
    l_best = l_one + n;
    l_keep = l_best + n;
    l_keep_scores = l_keep + n;
    l_sorted = l_keep_scores + n;
    l_merge = l_sorted + n;
    l_active = l_merge + n;
    l_selected = l_active + n;
    l_candidates = l_selected + n;
    l_candidate_scores = l_candidates + d + n;
    l_top = l_candidate_scores + d + n;
    l_top_scores = l_top + d;
    for (var i = w0; i < l_decoded; i++) {
        ws[i] = 0u;
    }
    if !decode_boxes() {
        return;
    }
    if param(6u) != 0u {
        regular_nms();
    } else {
        fast_nms();
    }
}
