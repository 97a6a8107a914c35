//! TFLite_Detection_PostProcess, the custom op that ends SSD detection models, as TFLM's
//! `detection_postprocess.cc` runs it: its options from the op's FlexBuffer
//! `custom_options`, float32 inputs (TFLM takes no other type), one `detection_postprocess`
//! dispatch into a workspace holding the four outputs then the scratch, and the outputs as
//! views of that workspace (copied where they are the model's outputs).

use crate::check::Ctx;
use crate::element::ElementType::Float32;
use crate::flexbuffer_map::FlexMap;
use crate::lowering::{kernel_error, LowerError, Lowering};
use crate::op::{Op, OpKind};
use crate::tensor::ShapeDisplay;
use crate::ImportError;
use ember_kernels::detection_postprocess::DetectionPostprocess;
use ember_kernels::KernelParams;
use std::fmt;

/// TFLM's `detections_per_class` where the options have none.
const DEFAULT_DETECTIONS_PER_CLASS: i32 = 100;

/// The options of TFLite_Detection_PostProcess, as TFLM reads them from its FlexBuffer map
/// (a missing key is 0, or false, except `detections_per_class`: 100).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectionPostprocessOptions {
    /// Output slots (at least 1).
    pub max_detections: usize,
    /// Classes per box in fast NMS (only 1, or any with one class, is taken).
    pub max_classes_per_detection: usize,
    /// Regular NMS's picks per class (at least 1).
    pub detections_per_class: usize,
    /// Regular NMS (per class), else fast (each box's best class).
    pub use_regular_nms: bool,
    /// Scores below it are never detections.
    pub score_threshold: f32,
    /// IoU above which a box is suppressed, in `(0, 1]`.
    pub iou_threshold: f32,
    /// Classes without the background.
    pub num_classes: usize,
    /// Divisors of the encoded y, x, log-height and log-width.
    pub scales: [f32; 4],
}

impl fmt::Display for DetectionPostprocessOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max_detections={} max_classes_per_detection={} detections_per_class={} \
             use_regular_nms={} nms_score_threshold={} nms_iou_threshold={} num_classes={} \
             scales={:?}",
            self.max_detections,
            self.max_classes_per_detection,
            self.detections_per_class,
            self.use_regular_nms,
            self.score_threshold,
            self.iou_threshold,
            self.num_classes,
            self.scales
        )
    }
}

/// Reads the options as TFLM's `DetectionPostProcessInit` does (`AsInt32`, `AsFloat`,
/// `AsBool`; null for a missing key).
fn read_options(ctx: &Ctx<'_, '_>) -> Result<DetectionPostprocessOptions, ImportError> {
    let map = FlexMap::parse(ctx.raw.custom_options)
        .map_err(|e| ctx.bad_options(format!("custom_options: {e}")))?;
    let bad = |key: &str, e: String| ctx.bad_options(format!("custom option {key}: {e}"));
    let int = |key: &'static str| map.get(key).as_i32().map_err(|e| bad(key, e));
    let float = |key: &'static str| map.get(key).as_f32().map_err(|e| bad(key, e));
    let count = |key: &'static str, value: i32, least: i32| {
        usize::try_from(value)
            .ok()
            .filter(|_| value >= least)
            .ok_or_else(|| bad(key, format!("{value} is not at least {least}")))
    };
    let per_class = match map.get("detections_per_class") {
        crate::flexbuffer_map::FlexValue::Null => DEFAULT_DETECTIONS_PER_CLASS,
        v => v.as_i32().map_err(|e| bad("detections_per_class", e))?,
    };
    let use_regular_nms = map
        .get("use_regular_nms")
        .as_bool()
        .map_err(|e| bad("use_regular_nms", e))?;
    let iou_threshold = float("nms_iou_threshold")?;
    if !(iou_threshold > 0.0 && iou_threshold <= 1.0) {
        return Err(bad(
            "nms_iou_threshold",
            format!("{iou_threshold} is outside (0, 1] (TFLM fails at invoke)"),
        ));
    }
    let options = DetectionPostprocessOptions {
        max_detections: count("max_detections", int("max_detections")?, 1)?,
        // Each NMS ignores the other's cap: TFLM checks only the one it runs.
        max_classes_per_detection: if use_regular_nms {
            int("max_classes_per_detection")?.max(0) as usize
        } else {
            count(
                "max_classes_per_detection",
                int("max_classes_per_detection")?,
                1,
            )?
        },
        detections_per_class: if use_regular_nms {
            count("detections_per_class", per_class, 1)?
        } else {
            per_class.max(1) as usize
        },
        use_regular_nms,
        score_threshold: float("nms_score_threshold")?,
        iou_threshold,
        num_classes: count("num_classes", int("num_classes")?, 1)?,
        scales: [
            float("y_scale")?,
            float("x_scale")?,
            float("h_scale")?,
            float("w_scale")?,
        ],
    };
    if !use_regular_nms && options.max_classes_per_detection.min(options.num_classes) != 1 {
        return Err(ctx.unsupported(
            "max_classes_per_detection",
            options.max_classes_per_detection,
            "1 with fast NMS (TFLM writes more classes per box past its outputs)",
        ));
    }
    Ok(options)
}

/// TFLite_Detection_PostProcess: inputs `[box_encodings [1, boxes, >=4], class_predictions
/// [1, boxes, num_classes (+1 background)], anchors [boxes, 4]]`, all float32 (TFLM's
/// kernel takes no quantized input); outputs float32 `[1, max_detections, 4]`, `[1,
/// max_detections]`, `[1, max_detections]`, `[1]` (TFLM writes those sizes whatever the
/// tensors say; other shapes are refused here).
pub(super) fn check_detection_postprocess(ctx: &Ctx<'_, '_>) -> Result<OpKind, ImportError> {
    ctx.arity(
        3..=3,
        3,
        4,
        "inputs [box_encodings, class_predictions, anchors] and 4 outputs",
    )?;
    let options = read_options(ctx)?;
    let (encodings, predictions, anchors) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let outputs = [
        ctx.output(0)?,
        ctx.output(1)?,
        ctx.output(2)?,
        ctx.output(3)?,
    ];
    for arg in [encodings, predictions, anchors].iter().chain(&outputs) {
        if arg.ty() != Float32 {
            return Err(ctx.type_err(format!(
                "{arg} must be float32 (TFLM's kernel reads no other type)"
            )));
        }
    }
    let enc = encodings.shape();
    if enc.len() != 3 || enc[0] != 1 || enc[2] < 4 {
        return Err(ctx.shape_err(format!("{encodings} must be [1, boxes, 4 or more]")));
    }
    let boxes = enc[1];
    let classes = options.num_classes;
    let pred = predictions.shape();
    if pred.len() != 3
        || pred[0] != 1
        || pred[1] != boxes
        || !(pred[2] == classes || pred[2] == classes + 1)
    {
        return Err(ctx.shape_err(format!(
            "{predictions} must be [1, {boxes}, {classes} or {}] (num_classes={classes}, \
             with or without a background class)",
            classes + 1
        )));
    }
    if anchors.shape() != [boxes, 4] {
        return Err(ctx.shape_err(format!("{anchors} must be [{boxes}, 4]")));
    }
    let d = options.max_detections;
    let expected: [&[usize]; 4] = [&[1, d, 4], &[1, d], &[1, d], &[1]];
    for (arg, want) in outputs.iter().zip(expected) {
        if arg.shape() != want {
            return Err(ctx.shape_err(format!(
                "{arg} must be {} (max_detections={d})",
                ShapeDisplay(want)
            )));
        }
    }
    params(&options, enc[2], boxes, pred[2])
        .validate()
        .map_err(|e| ctx.shape_err(e.to_string()))?;
    Ok(OpKind::DetectionPostprocess(options))
}

/// The kernel's parameters for options `o` over `boxes` boxes.
fn params(
    o: &DetectionPostprocessOptions,
    box_stride: usize,
    boxes: usize,
    classes_with_background: usize,
) -> DetectionPostprocess {
    DetectionPostprocess {
        num_boxes: boxes,
        box_stride,
        num_classes: o.num_classes,
        classes_with_background,
        max_detections: o.max_detections,
        detections_per_class: o.detections_per_class,
        regular: o.use_regular_nms,
        score_threshold: o.score_threshold,
        iou_threshold: o.iou_threshold,
        y_scale: o.scales[0],
        x_scale: o.scales[1],
        h_scale: o.scales[2],
        w_scale: o.scales[3],
    }
}

/// TFLite_Detection_PostProcess: `detection_postprocess` into a transient workspace, the
/// outputs its first words.
pub(super) fn lower_detection_postprocess(
    lowering: &mut Lowering<'_, '_>,
    op: &Op,
) -> Result<(), LowerError> {
    let OpKind::DetectionPostprocess(options) = &op.kind else {
        return Err(lowering.invalid(op, "not a TFLite_Detection_PostProcess".into()));
    };
    let encodings = lowering.input(op, 0)?;
    let predictions = lowering.input(op, 1)?;
    let anchors = lowering.input(op, 2)?;
    if op.outputs.len() != 4 {
        return Err(lowering.invalid(op, "needs 4 outputs".into()));
    }
    let graph = lowering.graph;
    let enc = &graph.tensor(encodings).shape;
    let pred = &graph.tensor(predictions).shape;
    let (Some(&stride), Some(&boxes), Some(&cwb)) = (enc.get(2), enc.get(1), pred.get(2)) else {
        return Err(lowering.invalid(op, "inputs of rank below 3".into()));
    };
    let p = params(options, stride, boxes, cwb);
    p.validate().map_err(kernel_error(op))?;
    let layout = p.layout();
    let mut words = Vec::new();
    p.encode(&mut words);
    let bindings = [
        lowering.operand(encodings),
        lowering.operand(predictions),
        lowering.operand(anchors),
        lowering
            .builder
            .transient(lowering.function, layout.words as u64 * 4),
    ];
    let workspace = bindings[3];
    lowering.dispatch(DetectionPostprocess::KERNEL, &words, &bindings);
    let d = p.max_detections as u64;
    let parts = [
        (layout.boxes, 4 * d),
        (layout.classes, d),
        (layout.scores, d),
        (layout.count, 1),
    ];
    for (&output, (at, len)) in op.outputs.iter().zip(parts) {
        lowering.view(output, workspace.slice(at as u64 * 4, len * 4));
    }
    Ok(())
}
