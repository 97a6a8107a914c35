#!/usr/bin/env python3
"""Two large int8 TFLite models, built here as FlatBuffers and run through TFLM.

Run it through `cargo xtask oracle --large`; by hand:

    target/oracle-venv/bin/python xtask/oracle/large_models.py -o target/oracle-large \
        [--only NAME ...] [--probe]

Each model goes into OUT/<name>/: `model.tflite` and what tflm_oracle.run_oracle writes beside
it (the all-zero case and the random cases of seeds 0, 1 and 2: inputs and TFLM's outputs as
.npy, and manifest.json, to which this script adds `name`, `ops`, `transients` and
`constant_bytes`). Only those folders are replaced; OUT/summary.json lists the models.

- `deep_int8`: input int8[1, 12, 12, 8], then BLOCKS residual blocks, each a
  DEPTHWISE_CONV_2D 3x3 SAME with a fused RELU, a CONV_2D 1x1 and an ADD of the block's input
  (three transients a block), then MEAN over height and width, FULLY_CONNECTED to 10 and
  SOFTMAX: more than 300 transients.
- `large_int8`: input int8[1, 2048], FULLY_CONNECTED 2048 (RELU), 1024 (RELU), 16: 6.3 MB of
  constants (the weights 2048 x 2048 and 1024 x 2048).

Weights are per-channel int8 with zero point 0 and the biases int32 at input scale times
weight scale (what TFLM requires). Every activation's scale and zero point is calibrated on
a float64 forward pass over random inputs drawn like the oracle's (the input's int8 values
uniform), so that the int8 activations keep a spread at every depth; --probe prints, for
deep_int8, TFLM's int8 histogram of the residual stream at several depths (the model built
again with those tensors as extra outputs). Everything is deterministic: numpy generators
seeded per model.
"""

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import flatbuffers
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_oracle  # noqa: E402
from single_op_models import Model  # noqa: E402
from tflm_oracle import schema_fb as s  # noqa: E402

T = s.TensorType
BO = s.BuiltinOperator
OPT = s.BuiltinOptions
ACT = s.ActivationFunctionType

# The oracle's cases: zeros, then these seeds.
SEEDS = [0, 1, 2]
# deep_int8's residual blocks.
BLOCKS = 110
# Random inputs the activations are calibrated on.
CALIBRATION = 16
# The input: int8 values q stand for q / 128.
INPUT_Q = (1.0 / 128, 0, 0)


class Graph(Model):
    """A one-subgraph model of many ops: single_op_models.Model's tensors, with ops added in
    order and the model serialized as Model.build serializes its one op."""

    def __init__(self):
        super().__init__()
        self.codes = []
        self.ops = []

    def op(self, opcode, options_type, options, inputs, outputs):
        if opcode not in self.codes:
            self.codes.append(opcode)
        op = s.OperatorT()
        op.opcodeIndex = self.codes.index(opcode)
        op.inputs = list(inputs)
        op.outputs = list(outputs)
        op.builtinOptionsType = options_type
        op.builtinOptions = options
        self.ops.append(op)

    def serialize(self, outputs, description):
        codes = []
        for opcode in self.codes:
            code = s.OperatorCodeT()
            code.builtinCode = opcode
            code.deprecatedBuiltinCode = min(opcode, 127)
            code.version = 1
            codes.append(code)
        sg = s.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = self.inputs
        sg.outputs = list(outputs)
        sg.operators = self.ops
        sg.name = b"main"
        m = s.ModelT()
        m.version = 3
        m.operatorCodes = codes
        m.subgraphs = [sg]
        m.buffers = self.buffers
        m.description = description.encode()
        b = flatbuffers.Builder(1 << 20)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def constant_bytes(self):
        return sum(len(b.data) for b in self.buffers if b.data is not None)

    def transients(self):
        """Tensors an op writes (the model's outputs among them)."""
        return len({t for op in self.ops for t in op.outputs})


# ---------------------------------------------------------------------------------------
# Quantization.


def calibrated(values, margin=1.05):
    """Asymmetric int8 (scale, zero point, 0) covering `values` (float64, any shape) and 0."""
    lo = min(float(values.min()) * margin, 0.0)
    hi = max(float(values.max()) * margin, 0.0)
    if hi - lo < 1e-9:
        hi = lo + 1e-3
    scale = (hi - lo) / 255.0
    zp = int(np.clip(round(-128 - lo / scale), -128, 127))
    return scale, zp, 0


def dequantized(v, q):
    """`v` as int8 in quantization `q`, then back to real numbers (what TFLM sees)."""
    scale, zp, _ = q
    return (np.clip(np.round(v / scale) + zp, -128, 127) - zp) * scale


def per_channel(w, axis):
    """Symmetric per-channel int8 weights of float `w` along `axis`: (int8 values, scales,
    the weights as the int8 values stand for them)."""
    other = tuple(a for a in range(w.ndim) if a != axis)
    peak = np.abs(w).max(axis=other)
    scales = np.where(peak > 0, peak / 127.0, 1.0)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q, scales, q.astype(np.float64) * scales.reshape(shape)


def bias_q(b, input_scale, weight_scales):
    """int32 bias at input scale times weight scale (TFLM's rule): (values, quantization,
    the bias as the int32 values stand for it)."""
    scales = input_scale * weight_scales
    q = np.round(b / scales).astype(np.int32)
    return q, (list(scales), [0] * len(scales), 0), q.astype(np.float64) * scales


def calibration_inputs(rng, shape):
    """Inputs drawn like the oracle's random cases: uniform int8, as real numbers."""
    q = rng.integers(-128, 128, size=[CALIBRATION] + list(shape[1:]))
    return q.astype(np.float64) * INPUT_Q[0]


# ---------------------------------------------------------------------------------------
# Float64 ops on a batch (the calibration's forward pass), NHWC.


def depthwise3x3_same(x, w, b):
    """x [N, H, W, C], w [3, 3, C], b [C]."""
    _, h, wd, _ = x.shape
    p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = np.zeros_like(x)
    for i in range(3):
        for j in range(3):
            y += p[:, i:i + h, j:j + wd, :] * w[i, j]
    return y + b


def relu(x):
    return np.maximum(x, 0.0)


# ---------------------------------------------------------------------------------------
# The models.


def conv_options(padding, act):
    o = s.Conv2DOptionsT()
    o.padding = padding
    o.strideH = o.strideW = 1
    o.dilationHFactor = o.dilationWFactor = 1
    o.fusedActivationFunction = act
    return o


def depthwise_options(act):
    o = s.DepthwiseConv2DOptionsT()
    o.padding = s.Padding.SAME
    o.strideH = o.strideW = 1
    o.dilationHFactor = o.dilationWFactor = 1
    o.depthMultiplier = 1
    o.fusedActivationFunction = act
    return o


def fc_options(act):
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = act
    o.keepNumDims = False
    return o


def fully_connected(g, rng, x, xv, xq, units, act, gain, name, standardize=False):
    """A per-channel int8 FULLY_CONNECTED of tensor `x` (values `xv` [N, depth] over the
    calibration batch, quantization `xq`) to `units`: (output tensor, values, quantization).
    With `standardize`, the weights and bias first centre each input feature on its mean over
    the batch and divide it by its spread there (so the outputs vary with the input)."""
    depth = xv.shape[1]
    w = rng.normal(0.0, gain / np.sqrt(depth), size=(units, depth))
    b = rng.normal(0.0, 0.1, size=units)
    if standardize:
        spread = np.maximum(xv.std(axis=0), 1e-6)
        w = w / spread
        b = b - xv.mean(axis=0) @ w.T
    wq, ws, wr = per_channel(w, 0)
    bq, bqq, br = bias_q(b, xq[0], ws)
    y = xv @ wr.T + br
    if act == ACT.RELU:
        y = relu(y)
    yq = calibrated(y)
    wt = g.tensor([units, depth], T.INT8, (list(ws), [0] * units, 0), wq, name=f"{name}/weights")
    bt = g.tensor([units], T.INT32, bqq, bq, name=f"{name}/bias")
    yt = g.tensor([1, units], T.INT8, yq, name=name)
    g.op(BO.FULLY_CONNECTED, OPT.FullyConnectedOptions, fc_options(act), [x, wt, bt], [yt])
    return yt, dequantized(y, yq), yq


def deep_int8(blocks=BLOCKS, probes=()):
    """The residual network; `probes` (block numbers) adds those blocks' outputs to the
    model's outputs, after the softmax."""
    rng = np.random.default_rng(20240601)
    g = Graph()
    shape = [1, 12, 12, 8]
    c = shape[3]
    x = g.tensor(shape, T.INT8, INPUT_Q, name="input", is_input=True)
    xv, xq = calibration_inputs(rng, shape), INPUT_Q
    probe_tensors = []
    for n in range(blocks):
        # DEPTHWISE_CONV_2D 3x3 SAME, RELU: filter [1, 3, 3, C], scales along dimension 3.
        w = rng.normal(0.0, 1.0 / 3.0, size=(3, 3, c))
        wq, ws, wr = per_channel(w, 2)
        bq, bqq, br = bias_q(rng.normal(0.0, 0.05, size=c), xq[0], ws)
        dv = relu(depthwise3x3_same(xv, wr, br))
        dq = calibrated(dv)
        wt = g.tensor([1, 3, 3, c], T.INT8, (list(ws), [0] * c, 3), wq.reshape(1, 3, 3, c),
                      name=f"block{n}/depthwise/filter")
        bt = g.tensor([c], T.INT32, bqq, bq, name=f"block{n}/depthwise/bias")
        d = g.tensor(shape, T.INT8, dq, name=f"block{n}/depthwise")
        g.op(BO.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions, depthwise_options(ACT.RELU),
             [x, wt, bt], [d])
        dv = dequantized(dv, dq)
        # CONV_2D 1x1: filter [C, 1, 1, C], scales along dimension 0; a branch of gain
        # about 0.25, so that the residual stream grows slowly.
        w = rng.normal(0.0, 0.25 / np.sqrt(c), size=(c, c))
        wq, ws, wr = per_channel(w, 0)
        bq, bqq, br = bias_q(rng.normal(0.0, 0.02, size=c), dq[0], ws)
        cv = dv @ wr.T + br
        cq = calibrated(cv)
        wt = g.tensor([c, 1, 1, c], T.INT8, (list(ws), [0] * c, 0), wq.reshape(c, 1, 1, c),
                      name=f"block{n}/conv/filter")
        bt = g.tensor([c], T.INT32, bqq, bq, name=f"block{n}/conv/bias")
        y = g.tensor(shape, T.INT8, cq, name=f"block{n}/conv")
        g.op(BO.CONV_2D, OPT.Conv2DOptions, conv_options(s.Padding.SAME, ACT.NONE),
             [d, wt, bt], [y])
        cv = dequantized(cv, cq)
        # ADD: the residual.
        av = xv + cv
        aq = calibrated(av)
        a = g.tensor(shape, T.INT8, aq, name=f"block{n}/add")
        o = s.AddOptionsT()
        o.fusedActivationFunction = ACT.NONE
        g.op(BO.ADD, OPT.AddOptions, o, [x, y], [a])
        x, xv, xq = a, dequantized(av, aq), aq
        if n in probes:
            probe_tensors.append((n, a))
    # MEAN over height and width.
    axes = g.tensor([2], T.INT32, data=np.array([1, 2], np.int32), name="mean/axes")
    mv = xv.mean(axis=(1, 2))
    mq = calibrated(mv)
    m = g.tensor([1, c], T.INT8, mq, name="mean")
    o = s.ReducerOptionsT()
    o.keepDims = False
    g.op(BO.MEAN, OPT.ReducerOptions, o, [x, axes], [m])
    mv = dequantized(mv, mq)
    # FULLY_CONNECTED to 10 logits of a spread of about 2 over the inputs, SOFTMAX.
    logits, _, _ = fully_connected(g, rng, m, mv, mq, 10, ACT.NONE, 2.0, "logits",
                                   standardize=True)
    p = g.tensor([1, 10], T.INT8, (1.0 / 256, -128, 0), name="softmax")
    o = s.SoftmaxOptionsT()
    o.beta = 1.0
    g.op(BO.SOFTMAX, OPT.SoftmaxOptions, o, [logits], [p])
    outputs = [p] + [t for _, t in probe_tensors]
    description = (f"ember deep_int8: {blocks} residual blocks (DEPTHWISE_CONV_2D 3x3, "
                   "CONV_2D 1x1, ADD), MEAN, FULLY_CONNECTED, SOFTMAX")
    return g, outputs, description, [n for n, _ in probe_tensors]


def large_int8():
    rng = np.random.default_rng(20240602)
    g = Graph()
    x = g.tensor([1, 2048], T.INT8, INPUT_Q, name="input", is_input=True)
    xv, xq = calibration_inputs(rng, [1, 2048]), INPUT_Q
    for n, (units, act) in enumerate([(2048, ACT.RELU), (1024, ACT.RELU), (16, ACT.NONE)]):
        x, xv, xq = fully_connected(g, rng, x, xv, xq, units, act, 1.5, f"fc{n}")
    description = "ember large_int8: FULLY_CONNECTED 2048 -> 2048 -> 1024 -> 16"
    return g, [x], description, []


MODELS = {"deep_int8": deep_int8, "large_int8": large_int8}


# ---------------------------------------------------------------------------------------


def histogram_line(a):
    """The int8 values' spread: distinct values, share at each end, percentiles."""
    v = a.reshape(-1).astype(np.int64)
    lo, hi = int(v.min()), int(v.max())
    return (f"{np.unique(v).size:3} distinct values in [{lo}, {hi}], "
            f"at -128 {np.mean(v == -128):5.1%}, at 127 {np.mean(v == 127):5.1%}, "
            f"percentiles 5/50/95: {np.percentile(v, 5):.0f} / {np.percentile(v, 50):.0f} / "
            f"{np.percentile(v, 95):.0f}")


def probe():
    """deep_int8 with the residual stream of some blocks as extra outputs, through TFLM on
    the random case of seed 0: the int8 spread at each depth."""
    from tflite_micro.python.tflite_micro import runtime

    blocks = [0, 1, 9, 29, 54, 79, 99, BLOCKS - 1]
    g, outputs, description, probed = deep_int8(probes=blocks)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.tflite"
        path.write_bytes(g.serialize(outputs, description))
        interp = runtime.Interpreter.from_file(str(path), arena_size=tflm_oracle.DEFAULT_ARENA)
        x = tflm_oracle.random_input(0, 0, np.int8, [1, 12, 12, 8], (-1.0, 1.0))
        interp.set_input(x, 0)
        interp.invoke()
        print("deep_int8 under TFLM, random case seed0, int8 values:")
        print(f"  input       {histogram_line(x)}")
        for k, n in enumerate(probed):
            print(f"  block {n:3}   {histogram_line(interp.get_output(k + 1))}")
        out = interp.get_output(0)
        print(f"  softmax     {np.array2string(out.reshape(-1), separator=', ')}")


def make(name, out_root):
    g, outputs, description, _ = MODELS[name]()
    out = out_root / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    path = out / "model.tflite"
    path.write_bytes(g.serialize(outputs, description))
    stats = {"name": name, "ops": len(g.ops), "transients": g.transients(),
             "constant_bytes": g.constant_bytes()}
    print(f"{name}: {stats['ops']} ops, {stats['transients']} transients, "
          f"{stats['constant_bytes']} bytes of constants")
    manifest = tflm_oracle.run_oracle(path, out, SEEDS, manifest_extra=stats)
    for case in manifest["cases"]:
        for f in case["outputs"]:
            print(f"  {case['name']} {f}: {histogram_line(np.load(out / f))}")
    stats["tflm_arena"] = manifest["arena"]["total"]
    return stats


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--out", type=Path, required=True)
    p.add_argument("--only", nargs="*", default=None, help="models (default: all)")
    p.add_argument("--probe", action="store_true",
                   help="print deep_int8's int8 spread at several depths under TFLM")
    args = p.parse_args(argv)
    if args.probe:
        probe()
        return 0
    names = args.only or list(MODELS)
    for name in names:
        if name not in MODELS:
            raise SystemExit(f"unknown model {name}; known: {', '.join(MODELS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"models": [make(name, args.out) for name in names]}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
