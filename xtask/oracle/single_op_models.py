#!/usr/bin/env python3
"""Randomized single-op TFLite models, each run through TFLM: the per-op oracle.

Run it through `cargo xtask oracle --ops [--count N] [--seed S]`; by hand:

    target/oracle-venv/bin/python xtask/oracle/single_op_models.py -o target/oracle-ops \
        [--count N] [--seed S] [--jobs J] [--only VARIANT ...]

For every op variant Ember supports (VARIANTS below: the op, its types, its quantization
flavour) it writes N models into OUT/<variant>/<n>/: `model.tflite`, one op whose
parameters (shapes, strides, padding, dilation, fused activation, broadcasting, scales
and zero points, weights, biases) are drawn from a `random.Random` seeded by (S, variant,
n, attempt), and what tflm_oracle.run_oracle writes beside it: the all-zero case and two
seeded random cases (inputs and TFLM's outputs as .npy) and manifest.json, to which this
script adds `op`, `variant`, `params` (what was drawn) and `attempt`.
The ops TFLM does not have (LITERT_OPS: RELU_N1_TO_1, RELU_0_TO_1, GELU) run through
TensorFlow Lite's own interpreter with its reference kernels instead (the manifest's
`oracle.interpreter` is then `litert-builtin-ref`).

Parameters are legal by construction (TFLM's constraints: int8 softmax output scale 1/256
zero point -128, int16 softmax 1/65536 and -32768, logistic 1/256 and -128, tanh 1/128 and 0,
weight zero points 0, bias int32 at input scale times weight scale, same quantization in
and out where TFLM copies bytes). A model TFLM still refuses (allocation or invoke error)
is drawn again with the next attempt number; every refusal is counted and its reason kept
in OUT/summary.json, which also lists each variant's models. Everything is deterministic
in (S, N): the same arguments write the same bytes.
"""

import argparse
import ctypes
import gc
import hashlib
import json
import math
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import flatbuffers
from flatbuffers import flexbuffers
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_oracle  # noqa: E402
from tflm_oracle import schema_fb as s  # noqa: E402

T = s.TensorType
BO = s.BuiltinOperator
OPT = s.BuiltinOptions
ACT = s.ActivationFunctionType
PADDING = s.Padding

ACT_NAMES = {ACT.NONE: "NONE", ACT.RELU: "RELU", ACT.RELU6: "RELU6",
             ACT.RELU_N1_TO_1: "RELU_N1_TO_1"}
ALL_ACTS = list(ACT_NAMES)
MAX_ATTEMPTS = 40
# Models one forked child runs in a row (a crash costs a fresh child, not the batch).
BATCH = 25


class Model:
    """A one-subgraph, one-op model under construction (the schema's object API)."""

    def __init__(self):
        self.tensors = []
        self.buffers = [s.BufferT()]
        self.inputs = []

    def tensor(self, shape, ttype, q=None, data=None, name=None, is_input=False):
        t = s.TensorT()
        t.shape = [int(d) for d in shape]
        t.type = ttype
        t.name = (name or f"t{len(self.tensors)}").encode()
        t.buffer = 0
        if data is not None:
            b = s.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if q is not None:
            scale, zp, dim = q
            qp = s.QuantizationParametersT()
            qp.scale = [float(x) for x in np.atleast_1d(scale)]
            qp.zeroPoint = [int(x) for x in np.atleast_1d(zp)]
            qp.quantizedDimension = int(dim)
            t.quantization = qp
        self.tensors.append(t)
        index = len(self.tensors) - 1
        if is_input:
            self.inputs.append(index)
        return index

    def build(self, opcode, options_type, options, op_inputs, op_outputs):
        code = s.OperatorCodeT()
        code.builtinCode = opcode
        code.deprecatedBuiltinCode = min(opcode, 127)
        code.version = 1
        custom = getattr(self, "custom", None)  # (custom_code, FlexBuffer options)
        if custom is not None:
            code.customCode = custom[0]
        op = s.OperatorT()
        op.opcodeIndex = 0
        op.inputs = list(op_inputs)
        op.outputs = list(op_outputs)
        op.builtinOptionsType = options_type
        op.builtinOptions = options
        if custom is not None:
            op.customOptions = np.frombuffer(custom[1], np.uint8)
            op.customOptionsFormat = 0
        sg = s.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = self.inputs
        sg.outputs = list(op_outputs)
        sg.operators = [op]
        sg.name = b"main"
        m = s.ModelT()
        m.version = 3
        m.operatorCodes = [code]
        m.subgraphs = [sg]
        m.buffers = self.buffers
        m.description = b"ember single-op test model"
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---------------------------------------------------------------------------------------
# Drawing parameters.


def log_uniform(r, lo, hi):
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


def act_scale(r):
    return log_uniform(r, 0.004, 0.2)


def zp8(r):
    return r.randint(-128, 127)


def shape(r, rank, lo=1, hi=5):
    return [r.randint(lo, hi) for _ in range(rank)]


def out_size(size, k, stride, dilation, same):
    eff = (k - 1) * dilation + 1
    if same:
        return (size + stride - 1) // stride
    return (size - eff + stride) // stride


def i8_weights(r, shape_):
    return np.array([r.randint(-127, 127) for _ in range(int(np.prod(shape_)))],
                    np.int8).reshape(shape_)


def f32_array(r, shape_, lo=-1.0, hi=1.0):
    return np.array([r.uniform(lo, hi) for _ in range(int(np.prod(shape_)))],
                    np.float32).reshape(shape_)


def pick_act(r, acts=ALL_ACTS):
    return r.choice(acts)


def weighted_quant(r, m, variant, x_shape, w_shape, bias_len, depth, qdim, channels):
    """Quantization of a weighted int8 op's input, weights, bias and output: per-channel
    (scales along `qdim`) or per-tensor; returns (input q, weights q, bias q, output q,
    bias values, weight scales)."""
    si, zi = act_scale(r), zp8(r)
    per_channel = "per-tensor" not in variant
    n = channels if per_channel else 1
    sw = [log_uniform(r, 0.001, 0.02) for _ in range(n)]
    # Accumulators are about sqrt(depth) * 74 * 73 * scales; put the output's range around
    # them, sometimes narrower (saturation), sometimes wider.
    typical = si * float(np.mean(sw)) * math.sqrt(depth) * 5400.0
    so = typical / log_uniform(r, 10.0, 160.0)
    if r.random() < 0.1:
        # An output scale below input times weight scale: requantization multipliers
        # above 1 (left shifts), most outputs saturated.
        so = si * min(sw) * r.uniform(0.2, 1.0)
    zo = zp8(r)
    sb = [si * w for w in (sw if per_channel else sw * 1)]
    spread = int(min(2**20, 5400 * math.sqrt(depth)))
    bias = np.array([r.randint(-spread, spread) for _ in range(bias_len)], np.int32)
    wq = (sw, [0] * n, qdim)
    bq = (sb, [0] * len(sb), 0)
    return (si, zi, 0), wq, bq, (so, zo, 0), bias


def bias_inputs(r, inputs, bias, params):
    """The op's inputs with its bias: none given either as the optional input -1 or as no
    third input at all (params["bias"] says which)."""
    if bias == -1:
        if r.random() < 0.5:
            params["bias"] = "none (two inputs)"
            return inputs
        params["bias"] = "none (input -1)"
    return inputs + [bias]


def draw_fully_connected(r, variant, m):
    int8 = "int8" in variant
    depth = r.randint(1, 48) if r.random() < 0.9 else r.randint(49, 400)
    units = r.randint(1, 24)
    rank = r.choice([2, 2, 2, 3, 4, 1]) if r.random() < 0.9 else 2
    if rank == 1:
        x_shape = [depth]
    else:
        lead = shape(r, rank - 1, 1, 3)
        x_shape = lead + [depth]
    keep = rank > 1 and r.random() < 0.3
    batches = int(np.prod(x_shape)) // depth
    out_shape = x_shape[:-1] + [units] if keep else [batches, units]
    has_bias = r.random() < 0.75
    activation = pick_act(r)
    params = dict(input=x_shape, units=units, keep_num_dims=keep, bias=has_bias,
                  activation=ACT_NAMES[activation])
    if int8:
        qi, wq, bq, qo, bias = weighted_quant(r, m, variant, x_shape, [units, depth], units,
                                              depth, 0, units)
        x = m.tensor(x_shape, T.INT8, qi, is_input=True)
        w = m.tensor([units, depth], T.INT8, wq, i8_weights(r, [units, depth]))
        b = m.tensor([units], T.INT32, bq, bias) if has_bias else -1
        y = m.tensor(out_shape, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2], weight_scales=len(wq[0]))
    else:
        x = m.tensor(x_shape, T.FLOAT32, is_input=True)
        w = m.tensor([units, depth], T.FLOAT32, data=f32_array(r, [units, depth]))
        b = m.tensor([units], T.FLOAT32, data=f32_array(r, [units])) if has_bias else -1
        y = m.tensor(out_shape, T.FLOAT32)
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    o.keepNumDims = keep
    return (BO.FULLY_CONNECTED, OPT.FullyConnectedOptions, o, bias_inputs(r, [x, w], b, params), [y],
            params, None)


def conv_geometry(r, depthwise):
    """Input, kernel, stride, dilation, padding with an output of at least one pixel."""
    while True:
        n = 1 if r.random() < 0.85 else 2
        big = 24 if r.random() < 0.1 else 10  # now and then, enough rows to split
        h, w = r.randint(1, big), r.randint(1, big)
        kh, kw = r.randint(1, 4), r.randint(1, 4)
        sh, sw = r.choice([1, 1, 2, 3]), r.choice([1, 1, 2, 3])
        if r.random() < 0.3:
            dh, dw = r.randint(1, 3), r.randint(1, 3)
        else:
            dh = dw = 1
        same = r.random() < 0.5
        oh = out_size(h, kh, sh, dh, same)
        ow = out_size(w, kw, sw, dw, same)
        if oh >= 1 and ow >= 1:
            return n, h, w, kh, kw, sh, sw, dh, dw, same, oh, ow


def draw_conv(r, variant, m):
    int8 = "int8" in variant
    n, h, w, kh, kw, sh, sw_, dh, dw, same, oh, ow = conv_geometry(r, False)
    cin, cout = r.randint(1, 8), r.randint(1, 8)
    has_bias = r.random() < 0.8
    activation = pick_act(r)
    params = dict(input=[n, h, w, cin], filter=[cout, kh, kw, cin], stride=[sh, sw_],
                  dilation=[dh, dw], padding="SAME" if same else "VALID", bias=has_bias,
                  activation=ACT_NAMES[activation], output=[n, oh, ow, cout])
    fshape = [cout, kh, kw, cin]
    if int8:
        qi, wq, bq, qo, bias = weighted_quant(r, m, variant, None, fshape, cout, kh * kw * cin,
                                              0, cout)
        x = m.tensor([n, h, w, cin], T.INT8, qi, is_input=True)
        f = m.tensor(fshape, T.INT8, wq, i8_weights(r, fshape))
        b = m.tensor([cout], T.INT32, bq, bias) if has_bias else -1
        y = m.tensor([n, oh, ow, cout], T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2], weight_scales=len(wq[0]))
    else:
        x = m.tensor([n, h, w, cin], T.FLOAT32, is_input=True)
        f = m.tensor(fshape, T.FLOAT32, data=f32_array(r, fshape))
        b = m.tensor([cout], T.FLOAT32, data=f32_array(r, [cout])) if has_bias else -1
        y = m.tensor([n, oh, ow, cout], T.FLOAT32)
    o = s.Conv2DOptionsT()
    o.padding = PADDING.SAME if same else PADDING.VALID
    o.strideH, o.strideW = sh, sw_
    o.dilationHFactor, o.dilationWFactor = dh, dw
    o.fusedActivationFunction = activation
    return BO.CONV_2D, OPT.Conv2DOptions, o, bias_inputs(r, [x, f], b, params), [y], params, None


def draw_depthwise(r, variant, m):
    int8 = "int8" in variant
    n, h, w, kh, kw, sh, sw_, dh, dw, same, oh, ow = conv_geometry(r, True)
    cin = r.randint(1, 8)
    mult = 1 if variant.endswith("-m1") else r.randint(2, 4)
    cout = cin * mult
    has_bias = r.random() < 0.8
    activation = pick_act(r)
    fshape = [1, kh, kw, cout]
    params = dict(input=[n, h, w, cin], filter=fshape, depth_multiplier=mult,
                  stride=[sh, sw_], dilation=[dh, dw], padding="SAME" if same else "VALID",
                  bias=has_bias, activation=ACT_NAMES[activation], output=[n, oh, ow, cout])
    if int8:
        v = variant if r.random() < 0.8 else variant + "-per-tensor"
        qi, wq, bq, qo, bias = weighted_quant(r, m, v, None, fshape, cout, kh * kw, 3, cout)
        x = m.tensor([n, h, w, cin], T.INT8, qi, is_input=True)
        f = m.tensor(fshape, T.INT8, wq, i8_weights(r, fshape))
        b = m.tensor([cout], T.INT32, bq, bias) if has_bias else -1
        y = m.tensor([n, oh, ow, cout], T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2], weight_scales=len(wq[0]))
    else:
        x = m.tensor([n, h, w, cin], T.FLOAT32, is_input=True)
        f = m.tensor(fshape, T.FLOAT32, data=f32_array(r, fshape))
        b = m.tensor([cout], T.FLOAT32, data=f32_array(r, [cout])) if has_bias else -1
        y = m.tensor([n, oh, ow, cout], T.FLOAT32)
    o = s.DepthwiseConv2DOptionsT()
    o.padding = PADDING.SAME if same else PADDING.VALID
    o.strideH, o.strideW = sh, sw_
    o.dilationHFactor, o.dilationWFactor = dh, dw
    o.depthMultiplier = mult
    o.fusedActivationFunction = activation
    # TFLM reads a third input as a bias even when it is -1 (and crashes): without a bias,
    # DEPTHWISE_CONV_2D has two inputs.
    ins = [x, f] if b == -1 else [x, f, b]
    if b == -1:
        params["bias"] = "none (two inputs)"
    return BO.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions, o, ins, [y], params, None


def draw_pool(r, variant, m):
    int8 = "int8" in variant
    while True:
        n = 1 if r.random() < 0.85 else 2
        big = 24 if r.random() < 0.1 else 10
        h, w, c = r.randint(1, big), r.randint(1, big), r.randint(1, 8)
        fh, fw = r.randint(1, 4), r.randint(1, 4)
        sh, sw_ = r.randint(1, 3), r.randint(1, 3)
        same = r.random() < 0.5
        oh, ow = out_size(h, fh, sh, 1, same), out_size(w, fw, sw_, 1, same)
        if oh >= 1 and ow >= 1:
            break
    activation = pick_act(r)
    params = dict(input=[n, h, w, c], filter=[fh, fw], stride=[sh, sw_],
                  padding="SAME" if same else "VALID", activation=ACT_NAMES[activation],
                  output=[n, oh, ow, c])
    if int8:
        q = (act_scale(r), zp8(r), 0)
        x = m.tensor([n, h, w, c], T.INT8, q, is_input=True)
        y = m.tensor([n, oh, ow, c], T.INT8, q)
        params.update(q=q[:2])
    else:
        x = m.tensor([n, h, w, c], T.FLOAT32, is_input=True)
        y = m.tensor([n, oh, ow, c], T.FLOAT32)
    o = s.Pool2DOptionsT()
    o.padding = PADDING.SAME if same else PADDING.VALID
    o.strideH, o.strideW = sh, sw_
    o.filterHeight, o.filterWidth = fh, fw
    o.fusedActivationFunction = activation
    opcode = {"AVERAGE_POOL_2D": BO.AVERAGE_POOL_2D, "MAX_POOL_2D": BO.MAX_POOL_2D,
              "L2_POOL_2D": BO.L2_POOL_2D}[VARIANTS[variant][0]]
    return opcode, OPT.Pool2DOptions, o, [x], [y], params, None


def broadcast_pair(r):
    rank = r.choice([1, 2, 3, 4, 4, 4, 5])
    out = shape(r, rank, 1, 5)
    while int(np.prod(out)) > 600:
        out = shape(r, rank, 1, 5)

    def operand():
        mode = r.random()
        if mode < 0.35:
            return list(out)
        dims = [d if r.random() < 0.5 else 1 for d in out]
        drop = r.randint(0, rank - 1) if r.random() < 0.4 else 0
        return dims[drop:] if dims[drop:] else [1]

    a, b = operand(), operand()
    # The output is the broadcast of the two: of the larger rank, TFLite's shape rule.
    rank = max(len(a), len(b))
    ra, rb = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
    return a, b, [max(x, y) for x, y in zip(ra, rb)]


def draw_add_mul(r, variant, m):
    int8 = "int8" in variant
    is_add = variant.startswith("add")
    a_shape, b_shape, out = broadcast_pair(r)
    activation = pick_act(r)
    params = dict(a=a_shape, b=b_shape, output=out, activation=ACT_NAMES[activation])
    if int8:
        sa, sb = act_scale(r), act_scale(r)
        if r.random() < 0.5:
            sb = sa * r.uniform(0.5, 2.0)
        if is_add:
            so = max(sa, sb) * r.uniform(0.7, 3.0)
        else:
            so = sa * sb * 128.0 * r.uniform(0.2, 3.0)
            if r.random() < 0.1:
                so = sa * sb * r.uniform(0.3, 1.0)  # a multiplier above 1
        qa, qb, qo = (sa, zp8(r), 0), (sb, zp8(r), 0), (so, zp8(r), 0)
        x = m.tensor(a_shape, T.INT8, qa, is_input=True)
        y = m.tensor(b_shape, T.INT8, qb, is_input=True)
        z = m.tensor(out, T.INT8, qo)
        params.update(a_q=qa[:2], b_q=qb[:2], output_q=qo[:2])
    else:
        x = m.tensor(a_shape, T.FLOAT32, is_input=True)
        y = m.tensor(b_shape, T.FLOAT32, is_input=True)
        z = m.tensor(out, T.FLOAT32)
    if is_add:
        o = s.AddOptionsT()
        o.fusedActivationFunction = activation
        return BO.ADD, OPT.AddOptions, o, [x, y], [z], params, (-2.0, 2.0)
    o = s.MulOptionsT()
    o.fusedActivationFunction = activation
    return BO.MUL, OPT.MulOptions, o, [x, y], [z], params, (-2.0, 2.0)


def draw_softmax(r, variant, m):
    rank = r.randint(1, 4)
    dims = shape(r, rank - 1, 1, 4) + [r.randint(1, 40) if r.random() < 0.9 else r.randint(41, 300)]
    beta = r.choice([1.0, 1.0, r.uniform(0.1, 3.0)])
    params = dict(shape=dims, beta=beta)
    if variant == "softmax-float32":
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        y = m.tensor(dims, T.FLOAT32)
        fr = (-8.0, 8.0)
    else:
        qi = (log_uniform(r, 0.01, 0.5), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        if variant == "softmax-int8":
            y = m.tensor(dims, T.INT8, (1.0 / 256, -128, 0))
        else:
            y = m.tensor(dims, T.INT16, (1.0 / 65536, -32768, 0))
        params.update(input_q=qi[:2])
        fr = None
    o = s.SoftmaxOptionsT()
    o.beta = beta
    return BO.SOFTMAX, OPT.SoftmaxOptions, o, [x], [y], params, fr


def draw_log_softmax(r, variant, m):
    rank = r.randint(1, 4)
    dims = shape(r, rank - 1, 1, 4) + [r.randint(1, 40)]
    o = s.LogSoftmaxOptionsT()
    if variant == "log_softmax-int8":
        # TFLM requires the output at scale 16/256, zero point 127. Some long rows.
        if r.random() < 0.1:
            dims[-1] = r.randint(41, 300)
        qi = (log_uniform(r, 0.01, 0.5), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, (16.0 / 256, 127, 0))
        params = dict(shape=dims, input_q=qi[:2])
        return BO.LOG_SOFTMAX, OPT.LogSoftmaxOptions, o, [x], [y], params, None
    x = m.tensor(dims, T.FLOAT32, is_input=True)
    y = m.tensor(dims, T.FLOAT32)
    return BO.LOG_SOFTMAX, OPT.LogSoftmaxOptions, o, [x], [y], dict(shape=dims), (-8.0, 8.0)


def draw_logistic_tanh(r, variant, m):
    logistic = variant.startswith("logistic")
    dims = shape(r, r.randint(1, 4), 1, 6)
    params = dict(shape=dims)
    if "float32" in variant:
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        y = m.tensor(dims, T.FLOAT32)
        fr = (-8.0, 8.0)
    else:
        qi = (log_uniform(r, 0.002, 0.5), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        qo = (1.0 / 256, -128, 0) if logistic else (1.0 / 128, 0, 0)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2])
        fr = None
    opcode = BO.LOGISTIC if logistic else BO.TANH
    return opcode, OPT.NONE, None, [x], [y], params, fr


def dtype_and_q(r, variant):
    if "int8" in variant:
        return T.INT8, (act_scale(r), zp8(r), 0)
    return T.FLOAT32, None


def factor_shape(r, count, rank):
    dims = [1] * rank
    remaining = count
    primes = []
    p = 2
    while remaining > 1:
        while remaining % p == 0:
            primes.append(p)
            remaining //= p
        p += 1
    for q in primes:
        dims[r.randrange(rank)] *= q
    return dims


def draw_reshape(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.randint(1, 4), 1, 6)
    count = int(np.prod(a))
    b = factor_shape(r, count, r.randint(1, 4))
    mode = r.choice(["tensor", "tensor-1", "options"])
    new_shape = list(b)
    if mode == "tensor-1":
        new_shape[r.randrange(len(b))] = -1
    params = dict(input=a, output=b, new_shape=new_shape, given_by=mode)
    x = m.tensor(a, ttype, q, is_input=True)
    y = m.tensor(b, ttype, q)
    o = s.ReshapeOptionsT()
    if mode == "options":
        o.newShape = new_shape
        ins = [x]
    else:
        o.newShape = new_shape if r.random() < 0.5 else None
        shp = m.tensor([len(new_shape)], T.INT32, data=np.array(new_shape, np.int32))
        ins = [x, shp]
    return BO.RESHAPE, OPT.ReshapeOptions, o, ins, [y], params, None


def draw_pad(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.choice([1, 2, 3, 4, 4, 5]), 1, 4)
    pads = [[r.choice([0, 0, 1, 2, 3]), r.choice([0, 0, 1, 2, 3])] for _ in a]
    out = [d + p[0] + p[1] for d, p in zip(a, pads)]
    params = dict(input=a, paddings=pads)
    x = m.tensor(a, ttype, q, is_input=True)
    p = m.tensor([len(a), 2], T.INT32, data=np.array(pads, np.int32))
    y = m.tensor(out, ttype, q)
    return BO.PAD, OPT.PadOptions, s.PadOptionsT(), [x, p], [y], params, None


def draw_mirror_pad(r, variant, m):
    """MIRROR_PAD, REFLECT or SYMMETRIC, each padding at most the dimension (less one for
    REFLECT), int32 or int64 paddings."""
    ttype, q = dtype_and_q(r, variant)
    reflect = r.random() < 0.5
    offset = 1 if reflect else 0
    a = shape(r, r.choice([1, 2, 3, 4, 4, 5]), 1, 5)
    pads = [[r.randint(0, min(3, d - offset)), r.randint(0, min(3, d - offset))] for d in a]
    out = [d + p[0] + p[1] for d, p in zip(a, pads)]
    params = dict(input=a, paddings=pads, mode="REFLECT" if reflect else "SYMMETRIC")
    x = m.tensor(a, ttype, q, is_input=True)
    pad_type, pad_np = r.choice([(T.INT32, np.int32), (T.INT64, np.int64)])
    p = m.tensor([len(a), 2], pad_type, data=np.array(pads, pad_np))
    y = m.tensor(out, ttype, q)
    o = s.MirrorPadOptionsT()
    o.mode = s.MirrorPadMode.REFLECT if reflect else s.MirrorPadMode.SYMMETRIC
    return BO.MIRROR_PAD, OPT.MirrorPadOptions, o, [x, p], [y], params, None


def draw_space_batch(r, variant, m):
    """SPACE_TO_BATCH_ND (paddings making each spatial dimension a multiple of its block) and
    BATCH_TO_SPACE_ND (crops within the grown dimensions), on rank-4 NHWC or rank-3 inputs,
    int32 block and paddings."""
    ttype, q = dtype_and_q(r, variant)
    to_batch = VARIANTS[variant][0] == "SPACE_TO_BATCH_ND"
    rank = r.choice([3, 4, 4, 4])
    spatial = rank - 2
    block = [r.randint(1, 3) for _ in range(spatial)]
    batch, depth = r.randint(1, 2), r.randint(1, 4)
    if to_batch:
        dims, pads = [], []
        for size in block:
            grown = size * r.randint(1, 4)
            dim = r.randint(1, grown)
            before = r.randint(0, grown - dim)
            dims.append(dim)
            pads.append([before, grown - dim - before])
        a = [batch] + dims + [depth]
        out = [batch * int(np.prod(block))] + [
            (d + p[0] + p[1]) // size for d, p, size in zip(dims, pads, block)] + [depth]
        opcode, pairs = BO.SPACE_TO_BATCH_ND, pads
        o, opt = s.SpaceToBatchNDOptionsT(), OPT.SpaceToBatchNDOptions
    else:
        dims = [r.randint(1, 4) for _ in block]
        crops = []
        for d, size in zip(dims, block):
            grown = d * size
            total = r.randint(0, min(grown - 1, 3))
            before = r.randint(0, total)
            crops.append([before, total - before])
        a = [batch * int(np.prod(block))] + dims + [depth]
        out = [batch] + [d * size - c[0] - c[1] for d, size, c in zip(dims, block, crops)] + [depth]
        opcode, pairs = BO.BATCH_TO_SPACE_ND, crops
        o, opt = s.BatchToSpaceNDOptionsT(), OPT.BatchToSpaceNDOptions
    x = m.tensor(a, ttype, q, is_input=True)
    b = m.tensor([spatial], T.INT32, data=np.array(block, np.int32))
    p = m.tensor([spatial, 2], T.INT32, data=np.array(pairs, np.int32))
    y = m.tensor(out, ttype, q)
    params = dict(input=a, block=block, pairs=pairs, output=out)
    return opcode, opt, o, [x, b, p], [y], params, None


def draw_reduce(r, variant, m):
    """SUM (int8 with MEAN's quantizations, the output's scale widened for a sum, and
    float32), REDUCE_MAX and REDUCE_MIN (int8 with one quantization in and out, as TFLM
    requires, and float32): MEAN's shapes and axes."""
    opcode, opt, options, ins, outs, params, fr = draw_mean(r, "mean-" + variant.split("-")[1], m)
    if variant == "sum-int8":
        q = m.tensors[outs[0]].quantization
        q.scale = [q.scale[0] * r.choice([1.0, 2.0, 4.0, 8.0])]
        params["output_q"] = (q.scale[0], q.zeroPoint[0])
    elif "int8" in variant:
        # The output takes the input's quantization.
        m.tensors[outs[0]].quantization = m.tensors[ins[0]].quantization
        params.pop("output_q", None)
    code = {"sum": BO.SUM, "reduce_max": BO.REDUCE_MAX, "reduce_min": BO.REDUCE_MIN}
    return code[variant.split("-")[0]], opt, options, ins, outs, params, (-4.0, 4.0)


def draw_mean(r, variant, m):
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 6)
    if rank == 4 and r.random() < 0.4:
        axes = [1, 2]
    else:
        # Mostly some axes kept (outputs of more than one element), sometimes all reduced.
        most = rank - 1 if rank > 1 and r.random() < 0.7 else rank
        axes = sorted(r.sample(range(rank), r.randint(1, most)))
    axes = [ax - rank if r.random() < 0.3 else ax for ax in axes]
    r.shuffle(axes)
    keep = r.random() < 0.5
    reduced = {ax % rank for ax in axes}
    if keep:
        out = [1 if i in reduced else d for i, d in enumerate(a)]
    else:
        out = [d for i, d in enumerate(a) if i not in reduced]
    params = dict(input=a, axes=axes, keep_dims=keep, output=out)
    if "int8" in variant:
        qi = (act_scale(r), zp8(r), 0)
        qo = qi if r.random() < 0.3 else (qi[0] * r.uniform(0.3, 2.0), zp8(r), 0)
        x = m.tensor(a, T.INT8, qi, is_input=True)
        y = m.tensor(out, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
    else:
        x = m.tensor(a, T.FLOAT32, is_input=True)
        y = m.tensor(out, T.FLOAT32)
    ax = m.tensor([len(axes)], T.INT32, data=np.array(axes, np.int32))
    o = s.ReducerOptionsT()
    o.keepDims = keep
    return BO.MEAN, OPT.ReducerOptions, o, [x, ax], [y], params, None


def draw_transpose(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.choice([1, 2, 3, 4, 4, 5])  # TFLM: "only supports 1D-5D"
    a = shape(r, rank, 1, 4)
    perm = list(range(rank))
    r.shuffle(perm)
    out = [a[p] for p in perm]
    params = dict(input=a, perm=perm)
    x = m.tensor(a, ttype, q, is_input=True)
    p = m.tensor([rank], T.INT32, data=np.array(perm, np.int32))
    y = m.tensor(out, ttype, q)
    return BO.TRANSPOSE, OPT.TransposeOptions, s.TransposeOptionsT(), [x, p], [y], params, None


def draw_concat(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.choice([1, 2, 3, 4, 4, 5])
    base = shape(r, rank, 1, 4)
    axis = r.randrange(rank)
    count = r.randint(1, 4) if r.random() < 0.1 else r.randint(2, 4)
    sizes = [r.randint(1, 5) for _ in range(count)]
    given_axis = axis - rank if r.random() < 0.3 else axis
    xs = []
    for k in sizes:
        d = list(base)
        d[axis] = k
        xs.append(m.tensor(d, ttype, q, is_input=True))
    out = list(base)
    out[axis] = sum(sizes)
    y = m.tensor(out, ttype, q)
    params = dict(base=base, axis=given_axis, sizes=sizes)
    o = s.ConcatenationOptionsT()
    o.axis = given_axis
    o.fusedActivationFunction = ACT.NONE
    return BO.CONCATENATION, OPT.ConcatenationOptions, o, xs, [y], params, None


def slice_dim(begin, end, stride, dim, bmask, emask, shrink):
    """TFLM's strided_slice_logic for one dimension: (start, stop), then the size."""
    lowest, highest = -(2**31), 2**31 - 1
    start = begin
    if bmask:
        start = lowest if stride > 0 else highest
    if start < 0:
        start += dim
    start = min(max(start, 0), dim) if stride > 0 else min(max(start, -1), dim - 1)
    if shrink:
        return start, start + 1, 1
    stop = end
    if emask:
        stop = highest if stride > 0 else lowest
    if stop < 0:
        stop += dim
    stop = min(max(stop, 0), dim) if stride > 0 else min(max(stop, -1), dim - 1)
    size = max(0, -(-(stop - start) // stride)) if stride > 0 else max(0, -(-(start - stop) // -stride))
    return start, stop, size


def draw_strided_slice(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    while True:
        rank = r.randint(1, 4)  # TFLM: "input dim should not exceed 4"
        a = shape(r, rank, 1, 7)
        begin, end, strides = [], [], []
        bmask = emask = smask = 0
        out = []
        ok = True
        for i, d in enumerate(a):
            if r.random() < 0.15:
                b = r.randint(-d, d - 1)
                begin.append(b)
                end.append(b + 1 if b != -1 else 0)
                strides.append(1)
                smask |= 1 << i
                continue
            st = r.choice([1, 1, 1, 2, 3, -1, -2])
            begin.append(r.randint(-d - 1, d + 1))
            end.append(r.randint(-d - 1, d + 1))
            strides.append(st)
            if r.random() < 0.25:
                bmask |= 1 << i
            if r.random() < 0.25:
                emask |= 1 << i
        for i, d in enumerate(a):
            _, _, size = slice_dim(begin[i], end[i], strides[i], d, bmask >> i & 1,
                                   emask >> i & 1, smask >> i & 1)
            if size < 1:
                ok = False
            if not smask >> i & 1:
                out.append(size)
        if ok and out:
            break
    params = dict(input=a, begin=begin, end=end, strides=strides, begin_mask=bmask,
                  end_mask=emask, shrink_axis_mask=smask, output=out)
    x = m.tensor(a, ttype, q, is_input=True)
    tb = m.tensor([rank], T.INT32, data=np.array(begin, np.int32))
    te = m.tensor([rank], T.INT32, data=np.array(end, np.int32))
    ts = m.tensor([rank], T.INT32, data=np.array(strides, np.int32))
    y = m.tensor(out, ttype, q)
    o = s.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.shrinkAxisMask = bmask, emask, smask
    return BO.STRIDED_SLICE, OPT.StridedSliceOptions, o, [x, tb, te, ts], [y], params, None


QUANT_TYPES = {"int8": T.INT8, "int16": T.INT16, "int32": T.INT32}
# input_scale / output_scale of each requantization with a 16- or 32-bit side: wide enough
# to reach saturation and the left shifts, within the 2^31 TFLM's multiplier takes.
# (int32's smallest, below 2^-31, give TFLM's zero multiplier.)
REQUANTIZE_RATIO = {("int8", "int16"): (0.1, 1000.0), ("int8", "int32"): (0.1, 1.0e5),
                    ("int16", "int8"): (1.0e-5, 0.05), ("int16", "int16"): (0.05, 3.0),
                    ("int16", "int32"): (0.1, 1.0e4), ("int32", "int8"): (1.0e-10, 1.0e-6),
                    ("int32", "int16"): (1.0e-9, 1.0e-4)}


def quant_zero_point(r, name):
    """A zero point of type `name`: int8's anywhere, wider ones mostly 0 (as converters
    give them) and otherwise small."""
    if name == "int8":
        return zp8(r)
    return 0 if r.random() < 0.6 else r.randint(-1000, 1000)


def draw_requantize_wide(r, variant, m):
    _, source, target = variant.split("-")
    dims = shape(r, r.randint(1, 4), 1, 6)
    so = act_scale(r) if target == "int8" else log_uniform(r, 1.0e-5, 1.0e-2)
    ratio = 1.0 if r.random() < 0.1 else log_uniform(r, *REQUANTIZE_RATIO[(source, target)])
    si, zi, zo = so * ratio, quant_zero_point(r, source), quant_zero_point(r, target)
    x = m.tensor(dims, QUANT_TYPES[source], (si, zi, 0), is_input=True)
    y = m.tensor(dims, QUANT_TYPES[target], (so, zo, 0))
    params = dict(shape=dims, input_q=(si, zi), output_q=(so, zo))
    return BO.QUANTIZE, OPT.NONE, None, [x], [y], params, None


def draw_quantize(r, variant, m):
    if tuple(variant.split("-")[1:]) in REQUANTIZE_RATIO:
        return draw_requantize_wide(r, variant, m)
    dims = shape(r, r.randint(1, 4), 1, 6)
    so, zo = act_scale(r), zp8(r)
    if variant == "quantize-float32-int16":
        so, zo = log_uniform(r, 1.0e-5, 1.0e-2), quant_zero_point(r, "int16")
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        reach = 32768 * so * r.uniform(0.5, 1.5)
        centre = -zo * so
        y = m.tensor(dims, T.INT16, (so, zo, 0))
        params = dict(shape=dims, output_q=(so, zo))
        return BO.QUANTIZE, OPT.NONE, None, [x], [y], params, (centre - reach, centre + reach)
    if variant == "quantize-uint8-int8":
        # A uint8 model's input: mostly its zero point 128 above at one scale (TFLM's fast
        # path), sometimes anything.
        si, zi = so, zo + 128
        if r.random() < 0.4:
            si, zi = so * log_uniform(r, 0.3, 3.0), r.randint(0, 255)
        x = m.tensor(dims, T.UINT8, (si, zi, 0), is_input=True)
        y = m.tensor(dims, T.INT8, (so, zo, 0))
        params = dict(shape=dims, input_q=(si, zi), output_q=(so, zo))
        return BO.QUANTIZE, OPT.NONE, None, [x], [y], params, None
    if variant == "quantize-int8-uint8":
        zu = zo + 128
        if r.random() < 0.4:
            zu = r.randint(0, 255)
        su = so if r.random() < 0.6 else so * log_uniform(r, 0.3, 3.0)
        x = m.tensor(dims, T.INT8, (so, zo, 0), is_input=True)
        y = m.tensor(dims, T.UINT8, (su, zu, 0))
        params = dict(shape=dims, input_q=(so, zo), output_q=(su, zu))
        return BO.QUANTIZE, OPT.NONE, None, [x], [y], params, None
    params = dict(shape=dims, output_q=(so, zo))
    if variant == "quantize-float32-int8":
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        reach = 128 * so * r.uniform(0.5, 1.5)
        centre = -zo * so
        fr = (centre - reach, centre + reach)
    else:
        si = so * log_uniform(r, 0.1, 10.0)
        qi = (si, zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        params.update(input_q=qi[:2])
        fr = None
    y = m.tensor(dims, T.INT8, (so, zo, 0))
    return BO.QUANTIZE, OPT.NONE, None, [x], [y], params, fr


def draw_dequantize(r, variant, m):
    dims = shape(r, r.randint(1, 4), 1, 6)
    if "uint8" in variant:
        qi = (act_scale(r), r.randint(0, 255), 0)
        x = m.tensor(dims, T.UINT8, qi, is_input=True)
    elif "int16" in variant:
        qi = (log_uniform(r, 1.0e-5, 1.0e-2), quant_zero_point(r, "int16"), 0)
        x = m.tensor(dims, T.INT16, qi, is_input=True)
    else:
        qi = (act_scale(r), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
    y = m.tensor(dims, T.FLOAT32)
    return BO.DEQUANTIZE, OPT.NONE, None, [x], [y], dict(shape=dims, input_q=qi[:2]), None


def draw_squeeze(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 5)
    a = [1 if r.random() < 0.4 else r.randint(2, 5) for _ in range(rank)]
    ones = [i for i, d in enumerate(a) if d == 1]
    if ones and r.random() < 0.6:
        dims = sorted(r.sample(ones, r.randint(1, len(ones))))
        dims = [d - rank if r.random() < 0.3 else d for d in dims]
        dropped = {d % rank for d in dims}
    else:
        dims = []
        dropped = set(ones)
    out = [d for i, d in enumerate(a) if i not in dropped]
    params = dict(input=a, squeeze_dims=dims, output=out)
    x = m.tensor(a, ttype, q, is_input=True)
    y = m.tensor(out, ttype, q)
    o = s.SqueezeOptionsT()
    o.squeezeDims = dims
    return BO.SQUEEZE, OPT.SqueezeOptions, o, [x], [y], params, None


def draw_expand_dims(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.randint(0, 4), 1, 5)
    axis = r.randint(-len(a) - 1, len(a))
    out = list(a)
    out.insert(axis if axis >= 0 else axis + len(a) + 1, 1)
    params = dict(input=a, axis=axis, output=out)
    x = m.tensor(a, ttype, q, is_input=True)
    ax = m.tensor([1], T.INT32, data=np.array([axis], np.int32))
    y = m.tensor(out, ttype, q)
    return BO.EXPAND_DIMS, OPT.ExpandDimsOptions, s.ExpandDimsOptionsT(), [x, ax], [y], params, None


def draw_slice(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.randint(1, 4), 1, 6)  # TFLM's SLICE: up to 5 dimensions
    begin = [r.randint(0, d - 1) for d in a]
    size = [r.randint(1, d - b) if r.random() < 0.8 else -1 for d, b in zip(a, begin)]
    out = [d - b if n == -1 else n for d, b, n in zip(a, begin, size)]
    params = dict(input=a, begin=begin, size=size)
    x = m.tensor(a, ttype, q, is_input=True)
    tb = m.tensor([len(a)], T.INT32, data=np.array(begin, np.int32))
    ts = m.tensor([len(a)], T.INT32, data=np.array(size, np.int32))
    y = m.tensor(out, ttype, q)
    return BO.SLICE, OPT.SliceOptions, s.SliceOptionsT(), [x, tb, ts], [y], params, None


def draw_split(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 4)
    axis = r.randrange(rank)
    parts = r.randint(1, 4)
    a[axis] *= parts
    out = list(a)
    out[axis] //= parts
    signed_axis = axis - rank if r.random() < 0.3 else axis
    params = dict(input=a, axis=signed_axis, num_splits=parts)
    ax = m.tensor([], T.INT32, data=np.array(signed_axis, np.int32))
    x = m.tensor(a, ttype, q, is_input=True)
    ys = [m.tensor(out, ttype, q) for _ in range(parts)]
    o = s.SplitOptionsT()
    o.numSplits = parts
    return BO.SPLIT, OPT.SplitOptions, o, [ax, x], ys, params, None


def draw_split_v(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 4)
    axis = r.randrange(rank)
    sizes = [r.randint(1, 4) for _ in range(r.randint(1, 4))]
    a[axis] = sum(sizes)
    given = list(sizes)
    if r.random() < 0.4:
        given[r.randrange(len(given))] = -1
    params = dict(input=a, axis=axis, size_splits=given)
    x = m.tensor(a, ttype, q, is_input=True)
    ts = m.tensor([len(given)], T.INT32, data=np.array(given, np.int32))
    ax = m.tensor([], T.INT32, data=np.array(axis, np.int32))
    ys = []
    for size in sizes:
        out = list(a)
        out[axis] = size
        ys.append(m.tensor(out, ttype, q))
    o = s.SplitVOptionsT()
    o.numSplits = len(sizes)
    return BO.SPLIT_V, OPT.SplitVOptions, o, [x, ts, ax], ys, params, None


def draw_unpack(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 4)
    axis = r.randrange(rank)
    out = [d for i, d in enumerate(a) if i != axis]
    signed_axis = axis - rank if r.random() < 0.3 else axis
    params = dict(input=a, axis=signed_axis)
    x = m.tensor(a, ttype, q, is_input=True)
    ys = [m.tensor(out, ttype, q) for _ in range(a[axis])]
    o = s.UnpackOptionsT()
    o.num = a[axis]
    o.axis = signed_axis
    return BO.UNPACK, OPT.UnpackOptions, o, [x], ys, params, None


def draw_pack(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(0, 3)
    a = shape(r, rank, 1, 4)
    count = r.randint(1, 5)
    axis = r.randint(-rank - 1, rank)
    out = list(a)
    out.insert(axis if axis >= 0 else axis + rank + 1, count)
    params = dict(input=a, count=count, axis=axis)
    xs = [m.tensor(a, ttype, q, is_input=True) for _ in range(count)]
    y = m.tensor(out, ttype, q)
    o = s.PackOptionsT()
    o.valuesCount = count
    o.axis = axis
    return BO.PACK, OPT.PackOptions, o, xs, [y], params, None


def draw_depth_space(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    block = r.randint(1, 3)
    n, h, w, c = r.randint(1, 2), r.randint(1, 3), r.randint(1, 3), r.randint(1, 3)
    to_space = variant.startswith("depth_to_space")
    if to_space:
        a, out = [n, h, w, c * block * block], [n, h * block, w * block, c]
        o = s.DepthToSpaceOptionsT()
        code, opt = BO.DEPTH_TO_SPACE, OPT.DepthToSpaceOptions
    else:
        a, out = [n, h * block, w * block, c], [n, h, w, c * block * block]
        o = s.SpaceToDepthOptionsT()
        code, opt = BO.SPACE_TO_DEPTH, OPT.SpaceToDepthOptions
    o.blockSize = block
    params = dict(input=a, block=block)
    x = m.tensor(a, ttype, q, is_input=True)
    y = m.tensor(out, ttype, q)
    return code, opt, o, [x], [y], params, None


def draw_padv2(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.choice([1, 2, 3, 4, 4]), 1, 4)
    pads = [[r.choice([0, 0, 1, 2, 3]), r.choice([0, 0, 1, 2, 3])] for _ in a]
    out = [d + p[0] + p[1] for d, p in zip(a, pads)]
    if ttype == T.INT8:
        value = np.array([r.randint(-128, 127)], np.int8)
    else:
        value = np.array([r.uniform(-3.0, 3.0)], np.float32)
    params = dict(input=a, paddings=pads, value=value[0].item())
    x = m.tensor(a, ttype, q, is_input=True)
    p = m.tensor([len(a), 2], T.INT32, data=np.array(pads, np.int32))
    v = m.tensor([1], ttype, q, data=value)
    y = m.tensor(out, ttype, q)
    return BO.PADV2, OPT.PadV2Options, s.PadV2OptionsT(), [x, p, v], [y], params, None


def draw_leaky_relu(r, variant, m):
    dims = shape(r, r.randint(1, 4), 1, 6)
    alpha = r.choice([0.1, 0.2, 0.3, r.uniform(0.01, 0.9), r.uniform(1.0, 3.0), -r.uniform(0.1, 2.0)])
    params = dict(shape=dims, alpha=alpha)
    if "int8" in variant:
        qi = (act_scale(r), zp8(r), 0)
        qo = qi if r.random() < 0.3 else (qi[0] * log_uniform(r, 0.3, 3.0), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        fr = None
    else:
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        y = m.tensor(dims, T.FLOAT32)
        fr = (-4.0, 4.0)
    o = s.LeakyReluOptionsT()
    o.alpha = alpha
    return BO.LEAKY_RELU, OPT.LeakyReluOptions, o, [x], [y], params, fr


def draw_resize_nearest(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    n, h, w, c = r.randint(1, 2), r.randint(1, 7), r.randint(1, 7), r.randint(1, 4)
    oh, ow = r.randint(1, 16), r.randint(1, 16)
    if r.random() < 0.4:  # the usual upsampling by a whole factor
        factor = r.randint(2, 3)
        oh, ow = h * factor, w * factor
    align = r.random() < 0.3
    half = not align and r.random() < 0.5
    params = dict(input=[n, h, w, c], size=[oh, ow], align_corners=align,
                  half_pixel_centers=half)
    x = m.tensor([n, h, w, c], ttype, q, is_input=True)
    size = m.tensor([2], T.INT32, data=np.array([oh, ow], np.int32))
    y = m.tensor([n, oh, ow, c], ttype, q)
    o = s.ResizeNearestNeighborOptionsT()
    o.alignCorners = align
    o.halfPixelCenters = half
    return (BO.RESIZE_NEAREST_NEIGHBOR, OPT.ResizeNearestNeighborOptions, o, [x, size], [y],
            params, None)


def draw_resize_bilinear(r, variant, m):
    # The input and output share their quantization (TFLM interpolates the raw int8 values).
    ttype, q = dtype_and_q(r, variant)
    n, h, w, c = r.randint(1, 2), r.randint(1, 7), r.randint(1, 7), r.randint(1, 4)
    kind = r.random()
    if kind < 0.3:  # the usual upsampling by a whole factor
        factor = r.randint(2, 3)
        oh, ow = h * factor, w * factor
    elif kind < 0.5:  # downsampling
        oh, ow = r.randint(1, h), r.randint(1, w)
    elif kind < 0.6:  # one long row: the fixed-point scales' rounding over many positions
        n, h, c = 1, 1, 1
        w, oh, ow = r.randint(2, 40), r.randint(1, 2), r.randint(1, 64)
    else:
        oh, ow = r.randint(1, 16), r.randint(1, 16)
    mode = r.randrange(3)  # TFLM refuses align_corners with half_pixel_centers
    align, half = mode == 1, mode == 2
    params = dict(input=[n, h, w, c], size=[oh, ow], align_corners=align,
                  half_pixel_centers=half)
    x = m.tensor([n, h, w, c], ttype, q, is_input=True)
    size = m.tensor([2], T.INT32, data=np.array([oh, ow], np.int32))
    y = m.tensor([n, oh, ow, c], ttype, q)
    o = s.ResizeBilinearOptionsT()
    o.alignCorners = align
    o.halfPixelCenters = half
    fr = None if q else (-4.0, 4.0)
    return (BO.RESIZE_BILINEAR, OPT.ResizeBilinearOptions, o, [x, size], [y], params, fr)


CAST_TYPES = {"int8": T.INT8, "int16": T.INT16, "int32": T.INT32, "float32": T.FLOAT32}
# A float range each integer type holds after truncation (and beyond, for int8's wrapping).
CAST_RANGE = {"int8": (-300.0, 300.0), "int16": (-40000.0, 40000.0),
              "int32": (-1.0e6, 1.0e6), "float32": (-10.0, 10.0)}


def draw_cast(r, variant, m):
    _, source, target = variant.split("-")
    dims = shape(r, r.randint(1, 4), 1, 6)
    params = dict(shape=dims, source=source, target=target)
    x = m.tensor(dims, CAST_TYPES[source], is_input=True)
    y = m.tensor(dims, CAST_TYPES[target])
    fr = CAST_RANGE[target] if source == "float32" else None
    return BO.CAST, OPT.CastOptions, s.CastOptionsT(), [x], [y], params, fr


def draw_gather(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 5)
    axis = r.randrange(rank)
    batch_dims = r.randint(0, axis) if r.random() < 0.3 else 0
    index_shape = a[:batch_dims] + shape(r, r.randint(0, 2), 1, 4)
    count = int(np.prod(index_shape, dtype=np.int64))
    index_values = np.array([r.randrange(a[axis]) for _ in range(count)], np.int32)
    out = a[:axis] + index_shape[batch_dims:] + a[axis + 1:]
    signed_axis = axis - rank if r.random() < 0.3 else axis
    params = dict(input=a, axis=signed_axis, batch_dims=batch_dims, indices=index_shape)
    x = m.tensor(a, ttype, q, is_input=True)
    ix = m.tensor(index_shape, T.INT32, data=index_values.reshape(index_shape))
    y = m.tensor(out, ttype, q)
    o = s.GatherOptionsT()
    o.axis = signed_axis
    o.batchDims = batch_dims
    return BO.GATHER, OPT.GatherOptions, o, [x, ix], [y], params, None


def draw_gather_nd(r, variant, m):
    """GATHER_ND: constant int32 index rows of depth 1 to the input's rank (at most 5), each
    inside the input, over up to two leading index dimensions."""
    ttype, q = dtype_and_q(r, variant)
    a = shape(r, r.randint(1, 5), 1, 5)
    depth = r.randint(1, min(len(a), 5))
    rows = shape(r, r.randint(0, 2), 1, 4)
    count = int(np.prod(rows, dtype=np.int64))
    values = np.array([[r.randrange(a[d]) for d in range(depth)] for _ in range(count)], np.int32)
    index_shape = rows + [depth]
    out = rows + a[depth:]
    x = m.tensor(a, ttype, q, is_input=True)
    ix = m.tensor(index_shape, T.INT32, data=values.reshape(index_shape))
    y = m.tensor(out, ttype, q)
    params = dict(input=a, indices=index_shape)
    return BO.GATHER_ND, OPT.GatherNdOptions, s.GatherNdOptionsT(), [x, ix], [y], params, None


def draw_l2_normalization(r, variant, m):
    """L2_NORMALIZATION over the last dimension, rank 1 to 4: float32, or int8 with the
    converter's output quantization (1/128, 0) and any input quantization."""
    a = shape(r, r.randint(1, 4), 1, 6)
    if r.random() < 0.3:
        a[-1] = r.randint(8, 64)
    if "int8" in variant:
        qi = (act_scale(r), zp8(r), 0)
        x = m.tensor(a, T.INT8, qi, is_input=True)
        y = m.tensor(a, T.INT8, (1.0 / 128, 0, 0))
    else:
        x = m.tensor(a, T.FLOAT32, is_input=True)
        y = m.tensor(a, T.FLOAT32)
    o = s.L2NormOptionsT()
    return BO.L2_NORMALIZATION, OPT.L2NormOptions, o, [x], [y], dict(shape=a), (-2.0, 2.0)


def draw_arg_min_max(r, variant, m):
    ttype, q = dtype_and_q(r, variant)
    rank = r.randint(1, 4)
    a = shape(r, rank, 1, 6)
    axis = r.randrange(rank)
    out = [d for i, d in enumerate(a) if i != axis]
    signed_axis = axis - rank if r.random() < 0.3 else axis
    params = dict(input=a, axis=signed_axis)
    x = m.tensor(a, ttype, q, is_input=True)
    ax = m.tensor([1], T.INT32, data=np.array([signed_axis], np.int32))
    y = m.tensor(out, T.INT32)
    if variant.startswith("arg_max"):
        o = s.ArgMaxOptionsT()
        o.outputType = T.INT32
        return BO.ARG_MAX, OPT.ArgMaxOptions, o, [x, ax], [y], params, None
    o = s.ArgMinOptionsT()
    o.outputType = T.INT32
    return BO.ARG_MIN, OPT.ArgMinOptions, o, [x, ax], [y], params, None


def draw_prelu(r, variant, m):
    """PRELU: alpha broadcast to the input (its shape, or its trailing dimensions with ones:
    per channel, shared over space), as TFLite's converter writes it (up to 4 dimensions)."""
    a = shape(r, r.randint(1, 4), 1, 5)
    alpha_shape = [d if r.random() < 0.6 else 1 for d in a][r.randint(0, len(a) - 1):]
    params = dict(input=a, alpha=alpha_shape)
    if "int8" in variant:
        qi = (act_scale(r), zp8(r), 0)
        qa = (log_uniform(r, 0.001, 0.02), zp8(r), 0)
        qo = (qi[0] * log_uniform(r, 0.5, 2.0), zp8(r), 0)
        x = m.tensor(a, T.INT8, qi, is_input=True)
        alpha = m.tensor(alpha_shape, T.INT8, qa, data=i8_weights(r, alpha_shape))
        y = m.tensor(a, T.INT8, qo)
        params.update(input_q=qi[:2], alpha_q=qa[:2], output_q=qo[:2])
    else:
        x = m.tensor(a, T.FLOAT32, is_input=True)
        alpha = m.tensor(alpha_shape, T.FLOAT32, data=f32_array(r, alpha_shape, -0.5, 1.5))
        y = m.tensor(a, T.FLOAT32)
    return BO.PRELU, OPT.NONE, None, [x, alpha], [y], params, (-3.0, 3.0)


# The float input range of each element-wise op: where its function is defined and varied.
ELEMENTWISE_RANGE = {
    "ABS": (-4.0, 4.0), "NEG": (-4.0, 4.0), "SQUARE": (-4.0, 4.0),
    "SQRT": (0.0, 20.0), "RSQRT": (0.001, 20.0), "EXP": (-10.0, 10.0),
    "LOG": (0.001, 50.0), "FLOOR": (-10.0, 10.0), "CEIL": (-10.0, 10.0),
    "ROUND": (-10.0, 10.0), "SIN": (-20.0, 20.0), "COS": (-20.0, 20.0),
    "RELU": (-8.0, 8.0), "RELU6": (-8.0, 8.0), "HARD_SWISH": (-8.0, 8.0),
    "ELU": (-8.0, 8.0),
}


def draw_elementwise(r, variant, m):
    """One of the element-wise ops without options: float32, or int8 RELU and RELU6 (RELU
    requantizes to its output's scale; RELU6 clamps the raw input and ignores the output's
    quantization, which TFLite's converter makes the input's)."""
    op_name = VARIANTS[variant][0]
    dims = shape(r, r.randint(1, 4), 1, 6)
    params = dict(shape=dims)
    if "int8" in variant and op_name in ("HARD_SWISH", "ELU"):
        # TFLM requires input_scale / 128 / output_scale at most 1.
        qi = (act_scale(r) * r.uniform(1.0, 10.0), zp8(r), 0)
        qo = (qi[0] * log_uniform(r, 0.3, 2.0), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        return getattr(BO, op_name), OPT.NONE, None, [x], [y], params, None
    if variant == "rsqrt-int8":
        # TFLM fails the Invoke on an input below the zero point: -128 keeps every byte valid.
        # The output spans the largest value, 1 / sqrt(input_scale), in 30 to 300 steps.
        qi = (act_scale(r) * r.uniform(1.0, 10.0), -128, 0)
        top = 1.0 / math.sqrt(qi[0])
        qo = (top / log_uniform(r, 30.0, 300.0), r.choice([-128, zp8(r)]), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        return getattr(BO, op_name), OPT.NONE, None, [x], [y], params, None
    if "int8" in variant:
        qi = (act_scale(r) * r.uniform(1.0, 10.0), zp8(r), 0)
        if op_name == "RELU" or (op_name == "ABS" and r.random() < 0.5) or r.random() < 0.2:
            qo = (qi[0] * log_uniform(r, 0.3, 3.0), zp8(r), 0)
        else:
            qo = qi
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        fr = None
    else:
        x = m.tensor(dims, T.FLOAT32, is_input=True)
        y = m.tensor(dims, T.FLOAT32)
        fr = ELEMENTWISE_RANGE[op_name]
    return getattr(BO, op_name), OPT.NONE, None, [x], [y], params, fr


def draw_bounded_relu(r, variant, m):
    """RELU_N1_TO_1 and RELU_0_TO_1 (TFLM has neither; LiteRT's reference kernels run them):
    float32, or int8 requantized to the output's scale and clamped to the bounds quantized
    there (an output range around the bounds, as TFLite's converter gives, or drawn apart)."""
    op_name = VARIANTS[variant][0]
    dims = shape(r, r.randint(1, 4), 1, 6)
    params = dict(shape=dims)
    if "int8" in variant:
        qi = (act_scale(r) * r.uniform(1.0, 10.0), zp8(r), 0)
        if r.random() < 0.3:
            lower = -1.0 if op_name == "RELU_N1_TO_1" else 0.0
            qo = ((1.0 - lower) / 255.0, int(round(-128 - lower * 255.0 / (1.0 - lower))), 0)
        else:
            qo = (qi[0] * log_uniform(r, 0.05, 3.0), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        return getattr(BO, op_name), OPT.NONE, None, [x], [y], params, None
    x = m.tensor(dims, T.FLOAT32, is_input=True)
    y = m.tensor(dims, T.FLOAT32)
    return getattr(BO, op_name), OPT.NONE, None, [x], [y], params, (-3.0, 3.0)


def draw_gelu(r, variant, m):
    """GELU (TFLM has none; LiteRT's reference kernels run it), `approximate` drawn:
    float32 (erfc or tanh), or int8 through TFLite's 256-entry table."""
    dims = shape(r, r.randint(1, 4), 1, 6)
    o = s.GeluOptionsT()
    o.approximate = r.random() < 0.5
    params = dict(shape=dims, approximate=o.approximate)
    if "int8" in variant:
        qi = (act_scale(r) * r.uniform(1.0, 10.0), zp8(r), 0)
        qo = (qi[0] * log_uniform(r, 0.3, 2.0), zp8(r), 0)
        x = m.tensor(dims, T.INT8, qi, is_input=True)
        y = m.tensor(dims, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2])
        return BO.GELU, OPT.GeluOptions, o, [x], [y], params, None
    x = m.tensor(dims, T.FLOAT32, is_input=True)
    y = m.tensor(dims, T.FLOAT32)
    return BO.GELU, OPT.GeluOptions, o, [x], [y], params, (-8.0, 8.0)


def draw_binary(r, variant, m):
    """SUB, DIV (with a fused activation), SQUARED_DIFFERENCE, MAXIMUM, MINIMUM: float32; int8
    SUB (rescaled as ADD), DIV and SQUARED_DIFFERENCE (each its own scales); or int8 MAXIMUM and MINIMUM (raw values; TFLite's converter gives the inputs and the output
    one quantization, sometimes drawn apart here)."""
    op_name = VARIANTS[variant][0]
    a_shape, b_shape, out = broadcast_pair(r)
    params = dict(a=a_shape, b=b_shape, output=out)
    if variant == "sub-int8":
        # As ADD's: each input its own scale, the output's wide enough for the difference.
        sa, sb = act_scale(r), act_scale(r)
        if r.random() < 0.5:
            sb = sa * r.uniform(0.5, 2.0)
        qs = [(sa, zp8(r), 0), (sb, zp8(r), 0), (max(sa, sb) * r.uniform(0.7, 3.0), zp8(r), 0)]
        x = m.tensor(a_shape, T.INT8, qs[0], is_input=True)
        y = m.tensor(b_shape, T.INT8, qs[1], is_input=True)
        z = m.tensor(out, T.INT8, qs[2])
        params.update(q=[list(q[:2]) for q in qs])
    elif variant == "div-int8":
        # The output scale puts the quotient's multiplier sa / (sb * so) mostly within
        # 1..50, sometimes below 1 (rounding exponents past 31 for small dividends).
        sa, sb = act_scale(r), act_scale(r)
        so = sa / sb * (log_uniform(r, 0.02, 1.0) if r.random() < 0.85 else r.uniform(1.0, 4.0))
        qs = [(sa, zp8(r), 0), (sb, zp8(r), 0), (so, zp8(r), 0)]
        x = m.tensor(a_shape, T.INT8, qs[0], is_input=True)
        y = m.tensor(b_shape, T.INT8, qs[1], is_input=True)
        z = m.tensor(out, T.INT8, qs[2])
        params.update(q=[list(q[:2]) for q in qs])
    elif variant == "squared_difference-int8":
        # Inputs rescaled as ADD's; the output's scale about the square of theirs.
        sa, sb = act_scale(r), act_scale(r)
        if r.random() < 0.5:
            sb = sa * r.uniform(0.5, 2.0)
        so = max(sa, sb) ** 2 * log_uniform(r, 8.0, 512.0)
        zo = -128 if r.random() < 0.5 else zp8(r)
        qs = [(sa, zp8(r), 0), (sb, zp8(r), 0), (so, zo, 0)]
        x = m.tensor(a_shape, T.INT8, qs[0], is_input=True)
        y = m.tensor(b_shape, T.INT8, qs[1], is_input=True)
        z = m.tensor(out, T.INT8, qs[2])
        params.update(q=[list(q[:2]) for q in qs])
    elif "int8" in variant:
        q = (act_scale(r), zp8(r), 0)
        qs = [q if r.random() < 0.8 else (act_scale(r), zp8(r), 0) for _ in range(3)]
        x = m.tensor(a_shape, T.INT8, qs[0], is_input=True)
        y = m.tensor(b_shape, T.INT8, qs[1], is_input=True)
        z = m.tensor(out, T.INT8, qs[2])
        params.update(q=[list(q[:2]) for q in qs])
    else:
        x = m.tensor(a_shape, T.FLOAT32, is_input=True)
        y = m.tensor(b_shape, T.FLOAT32, is_input=True)
        z = m.tensor(out, T.FLOAT32)
    fr = (-2.0, 2.0)
    if op_name in ("SUB", "DIV"):
        activation = pick_act(r)
        params.update(activation=ACT_NAMES[activation])
        o = s.SubOptionsT() if op_name == "SUB" else s.DivOptionsT()
        o.fusedActivationFunction = activation
        opt = OPT.SubOptions if op_name == "SUB" else OPT.DivOptions
        return getattr(BO, op_name), opt, o, [x, y], [z], params, fr
    return getattr(BO, op_name), OPT.NONE, None, [x, y], [z], params, fr


COMPARISON_TYPES = {"int8": T.INT8, "int32": T.INT32, "float32": T.FLOAT32}


def draw_comparison(r, variant, m):
    """EQUAL … GREATER_EQUAL with broadcasting: int8 (each input's own quantization, scales
    below 1 as TFLM requires; one shared quantization half the time, so values meet), int32
    or float32 (a quarter of the models compare an input with itself, so equality holds)."""
    op_name = VARIANTS[variant][0]
    ttype = COMPARISON_TYPES[variant.split("-")[1]]
    if ttype != T.INT8 and r.random() < 0.25:
        same = shape(r, r.randint(1, 4), 1, 5)
        x = m.tensor(same, ttype, is_input=True)
        z = m.tensor(same, T.BOOL)
        params = dict(a=same, b="the same tensor", output=same)
        return getattr(BO, op_name), OPT.NONE, None, [x, x], [z], params, (-2.0, 2.0)
    a_shape, b_shape, out = broadcast_pair(r)
    params = dict(a=a_shape, b=b_shape, output=out)
    qa = qb = None
    if ttype == T.INT8:
        qa = (act_scale(r), zp8(r), 0)
        qb = qa if r.random() < 0.5 else (act_scale(r) * r.choice([0.5, 1.0, 2.0]), zp8(r), 0)
        params.update(a_q=qa[:2], b_q=qb[:2])
    x = m.tensor(a_shape, ttype, qa, is_input=True)
    y = m.tensor(b_shape, ttype, qb, is_input=True)
    z = m.tensor(out, T.BOOL)
    return getattr(BO, op_name), OPT.NONE, None, [x, y], [z], params, (-2.0, 2.0)


def draw_logical(r, variant, m):
    """LOGICAL_AND and LOGICAL_OR with broadcasting, LOGICAL_NOT: bools."""
    op_name = VARIANTS[variant][0]
    if op_name == "LOGICAL_NOT":
        x_shape = shape(r, r.randint(1, 5), 1, 5)
        x = m.tensor(x_shape, T.BOOL, is_input=True)
        z = m.tensor(x_shape, T.BOOL)
        return BO.LOGICAL_NOT, OPT.NONE, None, [x], [z], dict(shape=x_shape), (-1.0, 1.0)
    a_shape, b_shape, out = broadcast_pair(r)
    x = m.tensor(a_shape, T.BOOL, is_input=True)
    y = m.tensor(b_shape, T.BOOL, is_input=True)
    z = m.tensor(out, T.BOOL)
    params = dict(a=a_shape, b=b_shape, output=out)
    return getattr(BO, op_name), OPT.NONE, None, [x, y], [z], params, (-1.0, 1.0)


def draw_select_v2(r, variant, m):
    """SELECT_V2: a bool condition and x and y of one type (int8 or int16 sharing one
    quantization, as the converter gives them, or float32), the three broadcast together."""
    ttype = {"int8": T.INT8, "int16": T.INT16, "float32": T.FLOAT32}[variant.split("-")[1]]
    rank = r.choice([1, 2, 3, 4, 4, 5])
    out = shape(r, rank, 1, 5)
    while int(np.prod(out)) > 600:
        out = shape(r, rank, 1, 5)

    def operand():
        if r.random() < 0.4:
            return list(out)
        dims = [d if r.random() < 0.5 else 1 for d in out]
        drop = r.randint(0, rank - 1) if r.random() < 0.4 else 0
        return dims[drop:] if dims[drop:] else [1]

    shapes = [operand() for _ in range(3)]
    rank = max(len(x) for x in shapes)
    padded = [[1] * (rank - len(x)) + x for x in shapes]
    out = [max(dims) for dims in zip(*padded)]
    q = None
    if ttype == T.INT8:
        q = (act_scale(r), zp8(r), 0)
    elif ttype == T.INT16:
        q = (act_scale(r), 0, 0)
    c = m.tensor(shapes[0], T.BOOL, is_input=True)
    x = m.tensor(shapes[1], ttype, q, is_input=True)
    y = m.tensor(shapes[2], ttype, q, is_input=True)
    z = m.tensor(out, ttype, q)
    params = dict(condition=shapes[0], x=shapes[1], y=shapes[2], output=out)
    return BO.SELECT_V2, OPT.NONE, None, [c, x, y], [z], params, (-2.0, 2.0)


FILL_TYPES = {"int8": T.INT8, "int16": T.INT16, "int32": T.INT32, "float32": T.FLOAT32}


def typed(r, variant):
    """The variant's tensor type (after the op's name) and a quantization for int8 and int16."""
    ttype = FILL_TYPES[variant.split("-")[1]]
    q = None
    if ttype == T.INT8:
        q = (act_scale(r), zp8(r), 0)
    elif ttype == T.INT16:
        q = (act_scale(r), 0, 0)
    return ttype, q


def draw_fill(r, variant, m):
    """FILL: constant dims (int32 or int64), a scalar value input of the output's type;
    ZEROS_LIKE: an input of any shape; SHAPE: the int32 dimensions of an int8 or float32
    input; BROADCAST_TO: an input broadcast to a constant shape of up to 5 dimensions."""
    op_name = VARIANTS[variant][0]
    ttype, q = typed(r, variant)
    out = shape(r, r.randint(1, 4), 1, 6)
    if op_name == "FILL":
        dims_type, dims_np = r.choice([(T.INT32, np.int32), (T.INT64, np.int64)])
        dims = m.tensor([len(out)], dims_type, data=np.array(out, dims_np))
        value = m.tensor([], ttype, q, is_input=True)
        y = m.tensor(out, ttype, q)
        return BO.FILL, OPT.NONE, None, [dims, value], [y], dict(dims=out), (-3.0, 3.0)
    if op_name == "ZEROS_LIKE":
        x = m.tensor(out, ttype, q, is_input=True)
        y = m.tensor(out, ttype, q)
        return BO.ZEROS_LIKE, OPT.NONE, None, [x], [y], dict(shape=out), (-3.0, 3.0)
    if op_name == "SHAPE":
        x = m.tensor(out, ttype, q, is_input=True)
        y = m.tensor([len(out)], T.INT32)
        o = s.ShapeOptionsT()
        o.outType = T.INT32
        return BO.SHAPE, OPT.ShapeOptions, o, [x], [y], dict(shape=out), (-3.0, 3.0)
    out = shape(r, r.randint(1, 5), 1, 5)
    dims = [d if r.random() < 0.5 else 1 for d in out]
    drop = r.randint(0, len(out) - 1) if r.random() < 0.4 else 0
    input_shape = dims[drop:] or [1]
    x = m.tensor(input_shape, ttype, q, is_input=True)
    target = m.tensor([len(out)], T.INT32, data=np.array(out, np.int32))
    y = m.tensor(out, ttype, q)
    params = dict(input=input_shape, shape=out)
    return BO.BROADCAST_TO, OPT.NONE, None, [x, target], [y], params, (-3.0, 3.0)


def draw_transpose_conv(r, variant, m):
    """TRANSPOSE_CONV: inputs [output_shape (a constant int32 [4]), weights OHWI, input,
    bias?]; kernels 1-5, strides 1-3, SAME or VALID, every fused activation TFLM takes, int8
    (weights per channel, int32 bias at input scale times weight scale) or float32. The output
    size is one TFLite's converter allows for the input (the sizes whose convolution with the
    same window gives the input back), now and then any (TFLM sizes the op and its padding
    by its output tensor alone)."""
    int8 = "int8" in variant
    n = 1 if r.random() < 0.85 else 2
    h, w = r.randint(1, 6), r.randint(1, 6)
    kh, kw = r.randint(1, 5), r.randint(1, 5)
    sh, sw_ = r.choice([1, 1, 2, 3]), r.choice([1, 1, 2, 3])
    same = r.random() < 0.5

    def out_extent(size, k, stride):
        if r.random() < 0.1:
            return r.randint(1, 12)
        if same:
            return r.randint((size - 1) * stride + 1, size * stride)
        return r.randint((size - 1) * stride + k, size * stride + k - 1)

    oh, ow = out_extent(h, kh, sh), out_extent(w, kw, sw_)
    cin, cout = r.randint(1, 8), r.randint(1, 8)
    has_bias = r.random() < 0.75
    activation = pick_act(r)
    fshape = [cout, kh, kw, cin]
    out = [n, oh, ow, cout]
    params = dict(input=[n, h, w, cin], filter=fshape, stride=[sh, sw_],
                  padding="SAME" if same else "VALID", bias=has_bias,
                  activation=ACT_NAMES[activation], output=out)
    dims = m.tensor([4], T.INT32, data=np.array(out, np.int32))
    if int8:
        # Each output sums about this many products.
        depth = cin * -(-kh // sh) * -(-kw // sw_)
        qi, wq, bq, qo, bias = weighted_quant(r, m, variant, None, fshape, cout, depth, 0, cout)
        f = m.tensor(fshape, T.INT8, wq, i8_weights(r, fshape))
        x = m.tensor([n, h, w, cin], T.INT8, qi, is_input=True)
        b = m.tensor([cout], T.INT32, bq, bias) if has_bias else -1
        y = m.tensor(out, T.INT8, qo)
        params.update(input_q=qi[:2], output_q=qo[:2], weight_scales=len(wq[0]))
    else:
        f = m.tensor(fshape, T.FLOAT32, data=f32_array(r, fshape))
        x = m.tensor([n, h, w, cin], T.FLOAT32, is_input=True)
        b = m.tensor([cout], T.FLOAT32, data=f32_array(r, [cout])) if has_bias else -1
        y = m.tensor(out, T.FLOAT32)
    o = s.TransposeConvOptionsT()
    o.padding = PADDING.SAME if same else PADDING.VALID
    o.strideH, o.strideW = sh, sw_
    o.fusedActivationFunction = activation
    ins = bias_inputs(r, [dims, f, x], b, params)
    return BO.TRANSPOSE_CONV, OPT.TransposeConvOptions, o, ins, [y], params, None


def draw_batch_matmul(r, variant, m):
    """BATCH_MATMUL: lhs and rhs of ranks 2 to 5 whose batch dimensions broadcast (each
    the output's or 1), adj_x and adj_y, the rhs a constant half the time (now and then the
    lhs instead, never both); depths up to 64. int8 per tensor with any zero points (TFLM
    takes them all), the output scale sized to the sums' spread so outputs keep one."""
    int8 = "int8" in variant
    ranks = [r.choice([2, 3, 3, 4, 4, 5]) for _ in range(2)]
    out_batch = shape(r, max(ranks) - 2, 1, 3)
    rows, cols = r.randint(1, 6), r.randint(1, 6)
    depth = r.randint(1, 8) if r.random() < 0.7 else r.randint(9, 64)
    adj_x, adj_y = r.random() < 0.5, r.random() < 0.5

    def batch(rank):
        lead = out_batch[len(out_batch) - (rank - 2):] if rank > 2 else []
        return [d if r.random() < 0.6 else 1 for d in lead]

    lhs = batch(ranks[0]) + ([depth, rows] if adj_x else [rows, depth])
    rhs = batch(ranks[1]) + ([cols, depth] if adj_y else [depth, cols])
    # The output's batch: each dimension the larger of the two (extended from the right).
    lb, rb = lhs[:-2], rhs[:-2]
    n = max(len(lb), len(rb))
    lb, rb = [1] * (n - len(lb)) + lb, [1] * (n - len(rb)) + rb
    out = [max(a, b) for a, b in zip(lb, rb)] + [rows, cols]
    which = r.random()
    const_rhs, const_lhs = which < 0.5, 0.5 <= which < 0.6
    params = dict(lhs=lhs, rhs=rhs, output=out, adj_x=adj_x, adj_y=adj_y,
                  const_lhs=const_lhs, const_rhs=const_rhs)
    if int8:
        ql = (act_scale(r), zp8(r), 0)
        qr = (log_uniform(r, 0.002, 0.05), zp8(r), 0)
        # Each int8 value spreads about ±74 (uniform) around minus its zero point; the sum
        # over depth about sqrt(depth) times the products' spread, plus depth times the
        # zero points' product; keep it within about ±60 output steps.
        zl, zr = ql[1], qr[1]
        spread = ql[0] * qr[0] * (math.sqrt(depth * (74.0**2 + zl**2) * (74.0**2 + zr**2))
                                  + depth * abs(zl * zr))
        qo = (spread / 60.0 * log_uniform(r, 0.6, 1.6), r.randint(-30, 30), 0)

        def operand(dims, q, const):
            if const:
                values = np.array([r.randint(-128, 127) for _ in range(int(np.prod(dims)))],
                                  np.int8).reshape(dims)
                return m.tensor(dims, T.INT8, q, values)
            return m.tensor(dims, T.INT8, q, is_input=True)

        a = operand(lhs, ql, const_lhs)
        b = operand(rhs, qr, const_rhs)
        y = m.tensor(out, T.INT8, qo)
        params.update(lhs_q=ql[:2], rhs_q=qr[:2], output_q=qo[:2])
    else:
        def operand(dims, const):
            if const:
                return m.tensor(dims, T.FLOAT32, data=f32_array(r, dims))
            return m.tensor(dims, T.FLOAT32, is_input=True)

        a = operand(lhs, const_lhs)
        b = operand(rhs, const_rhs)
        y = m.tensor(out, T.FLOAT32)
    o = s.BatchMatMulOptionsT()
    o.adjX, o.adjY = adj_x, adj_y
    return BO.BATCH_MATMUL, OPT.BatchMatMulOptions, o, [a, b], [y], params, None


def draw_floor_div_mod(r, variant, m):
    """FLOOR_DIV and FLOOR_MOD: float32 (the one type TFLM's micro kernels take), broadcast
    over up to 4 dimensions (TFLM's BroadcastBinaryFunction4DSlow). FLOOR_DIV's divisor is a
    constant: TFLM fails its invoke on a zero divisor, which the all-zero case would give it.
    FLOOR_MOD's is a constant too, or a third of the time an input (its all-zero case then
    NaN, as TFLM's). Divisors of both signs. Half the models draw on a grid: inputs in
    ±2^j are multiples of 2^(j-23) (tflm_oracle's random floats), divisors either 1, 3, 5
    or 7 times that step times 1 to 8 (quotients up to 2^23, many of them exact integers or
    a grid step either side of one) or odd multiples (1 to 15) of 2^(j-8) to 2^(j-1); the
    others draw real values in ±8 and divisors such as 0.1 and 0.3 that binary does not
    hold."""
    op_name = VARIANTS[variant][0]
    a_shape, b_shape, out = broadcast_pair(r)
    while len(out) > 4:
        a_shape, b_shape, out = broadcast_pair(r)
    grid = r.random() < 0.5
    if grid:
        j = r.choice([3, 6, 10])
        fr = (-2.0**j, 2.0**j)
        low = r.random() < 0.5

        def divisor():
            if low:
                return r.choice([-1, 1]) * r.randrange(1, 8, 2) * 2.0**r.randint(j - 23, j - 20)
            return r.choice([-1, 1]) * r.randrange(1, 16, 2) * 2.0**r.randint(j - 8, j - 1)
    else:
        fr = (-8.0, 8.0)
        nice = [0.1, 0.3, 0.7, 1.5, 2.5, 3.0, 0.25, 1 / 3, 2.0, 1.0]

        def divisor():
            v = r.choice(nice) if r.random() < 0.5 else r.uniform(0.05, 4.0)
            return r.choice([-1, 1]) * v
    params = dict(a=a_shape, b=b_shape, output=out, grid=grid, float_range=fr)
    x = m.tensor(a_shape, T.FLOAT32, is_input=True)
    if op_name == "FLOOR_MOD" and r.random() < 1 / 3:
        y = m.tensor(b_shape, T.FLOAT32, is_input=True)
        params.update(divisor="input")
    else:
        values = np.array([divisor() for _ in range(int(np.prod(b_shape)))],
                          np.float32).reshape(b_shape)
        y = m.tensor(b_shape, T.FLOAT32, data=values)
        params.update(divisor="constant")
    z = m.tensor(out, T.FLOAT32)
    return getattr(BO, op_name), OPT.NONE, None, [x, y], [z], params, fr


# Variant name -> (op name, drawer).
def draw_detection_postprocess(r, variant, m):
    """TFLite_Detection_PostProcess (custom op, FlexBuffer options): float32 box encodings
    [1, N, 4 or more] and class predictions [1, N, classes (+1 background)] as inputs,
    constant anchors [N, 4] in well-separated clusters of heavily overlapping boxes on a
    3x3 grid (plus, for regular NMS, some anywhere). Half the models draw their inputs from
    a range so narrow that scores repeat (ties; the all-zero case ties everything). Fast
    NMS: TFLM leaves the output slots past its detections unwritten (stale between the
    oracle's cases), so those models always fill every slot: the score threshold at or
    below every score and max_detections at most the clusters, one survivor each at least.
    Regular NMS draws thresholds anywhere, some keys left to their defaults."""
    regular = variant.endswith("regular")
    num_classes = r.randint(1, 5)
    background = r.random() < 0.6
    cwb = num_classes + (1 if background else 0)
    stride = 4 if r.random() < 0.8 else r.randint(5, 6)
    narrow = r.random() < 0.5
    fr = (0.25, 0.25 + 2.0**-20) if narrow else (-1.0, 1.0)
    centers = [(0.5 * i, 0.5 * j) for i in range(3) for j in range(3)]
    r.shuffle(centers)
    clusters = centers[:r.randint(1, 9)]
    anchors = []
    for cy, cx in clusters:
        for _ in range(r.randint(1, 4)):
            anchors.append([cy + r.uniform(-0.02, 0.02), cx + r.uniform(-0.02, 0.02),
                            r.uniform(0.05, 0.2), r.uniform(0.05, 0.2)])
    if regular and r.random() < 0.5:
        for _ in range(r.randint(1, 90)):
            anchors.append([r.uniform(0, 1), r.uniform(0, 1), r.uniform(0.02, 0.4),
                            r.uniform(0.02, 0.4)])
    r.shuffle(anchors)
    n = len(anchors)
    lo = min(fr[0], 0.0)
    if regular:
        max_det = r.randint(1, 12)
        score_threshold = r.choice([lo - 0.5, lo, r.uniform(*fr), fr[1], r.uniform(-1.0, 1.0)])
    else:
        max_det = r.randint(1, len(clusters))
        score_threshold = r.choice([lo, lo - r.uniform(0, 1)])
    iou_threshold = r.choice([0.5, 0.6, 1.0, r.uniform(0.01, 1.0)])
    scales = [r.choice([5.0, 10.0]), r.choice([5.0, 10.0]), r.choice([2.0, 5.0, 10.0]),
              r.choice([2.0, 5.0, 10.0])]
    opts = {"max_detections": max_det, "num_classes": num_classes,
            "nms_score_threshold": float(np.float32(score_threshold)),
            "nms_iou_threshold": float(np.float32(iou_threshold)),
            "y_scale": scales[0], "x_scale": scales[1], "h_scale": scales[2],
            "w_scale": scales[3],
            "max_classes_per_detection": 1 if not regular else r.randint(1, 3)}
    if regular or r.random() < 0.5:
        opts["use_regular_nms"] = regular
    if r.random() < 0.7:
        opts["detections_per_class"] = r.randint(1, 6)
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for key, value in opts.items():
            if isinstance(value, bool):
                fbb.Bool(key, value)
            elif isinstance(value, int):
                fbb.Int(key, value)
            else:
                fbb.Float(key, value)
    m.custom = (b"TFLite_Detection_PostProcess", bytes(fbb.Finish()))
    enc = m.tensor([1, n, stride], T.FLOAT32, is_input=True)
    pred = m.tensor([1, n, cwb], T.FLOAT32, is_input=True)
    anc = m.tensor([n, 4], T.FLOAT32, data=np.array(anchors, np.float32))
    outs = [m.tensor([1, max_det, 4], T.FLOAT32), m.tensor([1, max_det], T.FLOAT32),
            m.tensor([1, max_det], T.FLOAT32), m.tensor([1], T.FLOAT32)]
    params = dict(boxes=n, stride=stride, classes_with_background=cwb, narrow=narrow,
                  options=opts)
    return BO.CUSTOM, OPT.NONE, None, [enc, pred, anc], outs, params, fr


VARIANTS = {
    "fully_connected-int8-per-channel": ("FULLY_CONNECTED", draw_fully_connected),
    "fully_connected-int8-per-tensor": ("FULLY_CONNECTED", draw_fully_connected),
    "fully_connected-float32": ("FULLY_CONNECTED", draw_fully_connected),
    "conv_2d-int8-per-channel": ("CONV_2D", draw_conv),
    "conv_2d-int8-per-tensor": ("CONV_2D", draw_conv),
    "conv_2d-float32": ("CONV_2D", draw_conv),
    "depthwise_conv_2d-int8-m1": ("DEPTHWISE_CONV_2D", draw_depthwise),
    "depthwise_conv_2d-int8-mult": ("DEPTHWISE_CONV_2D", draw_depthwise),
    "depthwise_conv_2d-float32-m1": ("DEPTHWISE_CONV_2D", draw_depthwise),
    "depthwise_conv_2d-float32-mult": ("DEPTHWISE_CONV_2D", draw_depthwise),
    "average_pool_2d-int8": ("AVERAGE_POOL_2D", draw_pool),
    "average_pool_2d-float32": ("AVERAGE_POOL_2D", draw_pool),
    "max_pool_2d-int8": ("MAX_POOL_2D", draw_pool),
    "max_pool_2d-float32": ("MAX_POOL_2D", draw_pool),
    "add-int8": ("ADD", draw_add_mul),
    "add-float32": ("ADD", draw_add_mul),
    "mul-int8": ("MUL", draw_add_mul),
    "mul-float32": ("MUL", draw_add_mul),
    "softmax-int8": ("SOFTMAX", draw_softmax),
    "softmax-int8-int16": ("SOFTMAX", draw_softmax),
    "softmax-float32": ("SOFTMAX", draw_softmax),
    "log_softmax-float32": ("LOG_SOFTMAX", draw_log_softmax),
    "logistic-int8": ("LOGISTIC", draw_logistic_tanh),
    "logistic-float32": ("LOGISTIC", draw_logistic_tanh),
    "tanh-int8": ("TANH", draw_logistic_tanh),
    "tanh-float32": ("TANH", draw_logistic_tanh),
    "reshape-int8": ("RESHAPE", draw_reshape),
    "reshape-float32": ("RESHAPE", draw_reshape),
    "pad-int8": ("PAD", draw_pad),
    "pad-float32": ("PAD", draw_pad),
    "mean-int8": ("MEAN", draw_mean),
    "mean-float32": ("MEAN", draw_mean),
    "transpose-int8": ("TRANSPOSE", draw_transpose),
    "transpose-float32": ("TRANSPOSE", draw_transpose),
    "concatenation-int8": ("CONCATENATION", draw_concat),
    "concatenation-float32": ("CONCATENATION", draw_concat),
    "strided_slice-int8": ("STRIDED_SLICE", draw_strided_slice),
    "strided_slice-float32": ("STRIDED_SLICE", draw_strided_slice),
    "quantize-float32-int8": ("QUANTIZE", draw_quantize),
    "quantize-int8-int8": ("QUANTIZE", draw_quantize),
    "dequantize-int8-float32": ("DEQUANTIZE", draw_dequantize),
    "quantize-uint8-int8": ("QUANTIZE", draw_quantize),
    "quantize-int8-uint8": ("QUANTIZE", draw_quantize),
    "dequantize-uint8-float32": ("DEQUANTIZE", draw_dequantize),
    "cast-int8-int16": ("CAST", draw_cast),
    "cast-int8-int32": ("CAST", draw_cast),
    "cast-int8-float32": ("CAST", draw_cast),
    "cast-int16-int8": ("CAST", draw_cast),
    "cast-int16-int32": ("CAST", draw_cast),
    "cast-int16-float32": ("CAST", draw_cast),
    "cast-int32-int8": ("CAST", draw_cast),
    "cast-int32-int16": ("CAST", draw_cast),
    "cast-int32-float32": ("CAST", draw_cast),
    "cast-float32-int8": ("CAST", draw_cast),
    "cast-float32-int16": ("CAST", draw_cast),
    "cast-float32-int32": ("CAST", draw_cast),
    "sum-float32": ("SUM", draw_reduce),
    "sum-int8": ("SUM", draw_reduce),
    "reduce_max-int8": ("REDUCE_MAX", draw_reduce),
    "reduce_max-float32": ("REDUCE_MAX", draw_reduce),
    "reduce_min-int8": ("REDUCE_MIN", draw_reduce),
    "reduce_min-float32": ("REDUCE_MIN", draw_reduce),
    "arg_max-int8": ("ARG_MAX", draw_arg_min_max),
    "arg_max-float32": ("ARG_MAX", draw_arg_min_max),
    "arg_min-int8": ("ARG_MIN", draw_arg_min_max),
    "arg_min-float32": ("ARG_MIN", draw_arg_min_max),
    "gather-int8": ("GATHER", draw_gather),
    "gather-float32": ("GATHER", draw_gather),
    "resize_nearest_neighbor-int8": ("RESIZE_NEAREST_NEIGHBOR", draw_resize_nearest),
    "resize_nearest_neighbor-float32": ("RESIZE_NEAREST_NEIGHBOR", draw_resize_nearest),
    "leaky_relu-int8": ("LEAKY_RELU", draw_leaky_relu),
    "leaky_relu-float32": ("LEAKY_RELU", draw_leaky_relu),
    "prelu-int8": ("PRELU", draw_prelu),
    "prelu-float32": ("PRELU", draw_prelu),
    "sub-float32": ("SUB", draw_binary),
    "sub-int8": ("SUB", draw_binary),
    "div-float32": ("DIV", draw_binary),
    "squared_difference-float32": ("SQUARED_DIFFERENCE", draw_binary),
    "div-int8": ("DIV", draw_binary),
    "squared_difference-int8": ("SQUARED_DIFFERENCE", draw_binary),
    "maximum-int8": ("MAXIMUM", draw_binary),
    "maximum-float32": ("MAXIMUM", draw_binary),
    "minimum-int8": ("MINIMUM", draw_binary),
    "minimum-float32": ("MINIMUM", draw_binary),
    "relu-int8": ("RELU", draw_elementwise),
    "relu-float32": ("RELU", draw_elementwise),
    "relu6-int8": ("RELU6", draw_elementwise),
    "relu6-float32": ("RELU6", draw_elementwise),
    "hard_swish-float32": ("HARD_SWISH", draw_elementwise),
    "hard_swish-int8": ("HARD_SWISH", draw_elementwise),
    "elu-float32": ("ELU", draw_elementwise),
    "elu-int8": ("ELU", draw_elementwise),
    "abs-float32": ("ABS", draw_elementwise),
    "neg-float32": ("NEG", draw_elementwise),
    "square-float32": ("SQUARE", draw_elementwise),
    "sqrt-float32": ("SQRT", draw_elementwise),
    "rsqrt-float32": ("RSQRT", draw_elementwise),
    "exp-float32": ("EXP", draw_elementwise),
    "log-float32": ("LOG", draw_elementwise),
    "floor-float32": ("FLOOR", draw_elementwise),
    "ceil-float32": ("CEIL", draw_elementwise),
    "round-float32": ("ROUND", draw_elementwise),
    "sin-float32": ("SIN", draw_elementwise),
    "cos-float32": ("COS", draw_elementwise),
    "squeeze-int8": ("SQUEEZE", draw_squeeze),
    "squeeze-float32": ("SQUEEZE", draw_squeeze),
    "expand_dims-int8": ("EXPAND_DIMS", draw_expand_dims),
    "expand_dims-float32": ("EXPAND_DIMS", draw_expand_dims),
    "slice-int8": ("SLICE", draw_slice),
    "slice-float32": ("SLICE", draw_slice),
    "split-int8": ("SPLIT", draw_split),
    "split-float32": ("SPLIT", draw_split),
    "split_v-int8": ("SPLIT_V", draw_split_v),
    "split_v-float32": ("SPLIT_V", draw_split_v),
    "unpack-int8": ("UNPACK", draw_unpack),
    "unpack-float32": ("UNPACK", draw_unpack),
    "pack-int8": ("PACK", draw_pack),
    "pack-float32": ("PACK", draw_pack),
    "depth_to_space-int8": ("DEPTH_TO_SPACE", draw_depth_space),
    "depth_to_space-float32": ("DEPTH_TO_SPACE", draw_depth_space),
    "space_to_depth-int8": ("SPACE_TO_DEPTH", draw_depth_space),
    "space_to_depth-float32": ("SPACE_TO_DEPTH", draw_depth_space),
    "padv2-int8": ("PADV2", draw_padv2),
    "padv2-float32": ("PADV2", draw_padv2),
    "equal-int8": ("EQUAL", draw_comparison),
    "equal-int32": ("EQUAL", draw_comparison),
    "equal-float32": ("EQUAL", draw_comparison),
    "not_equal-int8": ("NOT_EQUAL", draw_comparison),
    "not_equal-int32": ("NOT_EQUAL", draw_comparison),
    "not_equal-float32": ("NOT_EQUAL", draw_comparison),
    "less-int8": ("LESS", draw_comparison),
    "less-int32": ("LESS", draw_comparison),
    "less-float32": ("LESS", draw_comparison),
    "less_equal-int8": ("LESS_EQUAL", draw_comparison),
    "less_equal-int32": ("LESS_EQUAL", draw_comparison),
    "less_equal-float32": ("LESS_EQUAL", draw_comparison),
    "greater-int8": ("GREATER", draw_comparison),
    "greater-int32": ("GREATER", draw_comparison),
    "greater-float32": ("GREATER", draw_comparison),
    "greater_equal-int8": ("GREATER_EQUAL", draw_comparison),
    "greater_equal-int32": ("GREATER_EQUAL", draw_comparison),
    "greater_equal-float32": ("GREATER_EQUAL", draw_comparison),
    "logical_and-bool": ("LOGICAL_AND", draw_logical),
    "logical_or-bool": ("LOGICAL_OR", draw_logical),
    "logical_not-bool": ("LOGICAL_NOT", draw_logical),
    "select_v2-int8": ("SELECT_V2", draw_select_v2),
    "select_v2-int16": ("SELECT_V2", draw_select_v2),
    "select_v2-float32": ("SELECT_V2", draw_select_v2),
    "fill-int8": ("FILL", draw_fill),
    "fill-int32": ("FILL", draw_fill),
    "fill-float32": ("FILL", draw_fill),
    "zeros_like-int8": ("ZEROS_LIKE", draw_fill),
    "zeros_like-int32": ("ZEROS_LIKE", draw_fill),
    "zeros_like-float32": ("ZEROS_LIKE", draw_fill),
    "broadcast_to-int8": ("BROADCAST_TO", draw_fill),
    "broadcast_to-int16": ("BROADCAST_TO", draw_fill),
    "broadcast_to-int32": ("BROADCAST_TO", draw_fill),
    "broadcast_to-float32": ("BROADCAST_TO", draw_fill),
    "shape-int8": ("SHAPE", draw_fill),
    "shape-float32": ("SHAPE", draw_fill),
    "mirror_pad-int8": ("MIRROR_PAD", draw_mirror_pad),
    "mirror_pad-float32": ("MIRROR_PAD", draw_mirror_pad),
    "space_to_batch_nd-int8": ("SPACE_TO_BATCH_ND", draw_space_batch),
    "space_to_batch_nd-float32": ("SPACE_TO_BATCH_ND", draw_space_batch),
    "batch_to_space_nd-int8": ("BATCH_TO_SPACE_ND", draw_space_batch),
    "batch_to_space_nd-float32": ("BATCH_TO_SPACE_ND", draw_space_batch),
    "gather_nd-int8": ("GATHER_ND", draw_gather_nd),
    "gather_nd-float32": ("GATHER_ND", draw_gather_nd),
    "l2_normalization-int8": ("L2_NORMALIZATION", draw_l2_normalization),
    "l2_normalization-float32": ("L2_NORMALIZATION", draw_l2_normalization),
    "l2_pool_2d-float32": ("L2_POOL_2D", draw_pool),
    "resize_bilinear-int8": ("RESIZE_BILINEAR", draw_resize_bilinear),
    "resize_bilinear-float32": ("RESIZE_BILINEAR", draw_resize_bilinear),
    "transpose_conv-int8-per-channel": ("TRANSPOSE_CONV", draw_transpose_conv),
    "transpose_conv-float32": ("TRANSPOSE_CONV", draw_transpose_conv),
    "batch_matmul-int8": ("BATCH_MATMUL", draw_batch_matmul),
    "batch_matmul-float32": ("BATCH_MATMUL", draw_batch_matmul),
    "floor_div-float32": ("FLOOR_DIV", draw_floor_div_mod),
    "floor_mod-float32": ("FLOOR_MOD", draw_floor_div_mod),
    "quantize-float32-int16": ("QUANTIZE", draw_quantize),
    "quantize-int8-int16": ("QUANTIZE", draw_quantize),
    "quantize-int8-int32": ("QUANTIZE", draw_quantize),
    "quantize-int16-int8": ("QUANTIZE", draw_quantize),
    "quantize-int16-int16": ("QUANTIZE", draw_quantize),
    "quantize-int16-int32": ("QUANTIZE", draw_quantize),
    "quantize-int32-int8": ("QUANTIZE", draw_quantize),
    "quantize-int32-int16": ("QUANTIZE", draw_quantize),
    "dequantize-int16-float32": ("DEQUANTIZE", draw_dequantize),
    "abs-int8": ("ABS", draw_elementwise),
    "rsqrt-int8": ("RSQRT", draw_elementwise),
    "log_softmax-int8": ("LOG_SOFTMAX", draw_log_softmax),
    "detection_postprocess-float32-fast": ("TFLite_Detection_PostProcess",
                                           draw_detection_postprocess),
    "detection_postprocess-float32-regular": ("TFLite_Detection_PostProcess",
                                              draw_detection_postprocess),
    "relu_n1_to_1-int8": ("RELU_N1_TO_1", draw_bounded_relu),
    "relu_n1_to_1-float32": ("RELU_N1_TO_1", draw_bounded_relu),
    "relu_0_to_1-int8": ("RELU_0_TO_1", draw_bounded_relu),
    "relu_0_to_1-float32": ("RELU_0_TO_1", draw_bounded_relu),
    "gelu-int8": ("GELU", draw_gelu),
    "gelu-float32": ("GELU", draw_gelu),
}

# The ops TFLM does not have: their oracle is TensorFlow Lite's own interpreter with its
# reference kernels (tflm_oracle.LITERT_REF), recorded in each manifest.
LITERT_OPS = {"RELU_N1_TO_1", "RELU_0_TO_1", "GELU"}


def model_seed(seed, variant, n, attempt):
    h = hashlib.sha256(f"{seed}/{variant}/{n}/{attempt}".encode()).digest()
    return int.from_bytes(h[:8], "little")


def jsonable(v):
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def quiet(fn):
    """fn() with file descriptors 1 and 2 captured: (result or exception, captured text)."""
    box = {}

    def call():
        try:
            box["value"] = fn()
        except Exception as e:  # TFLM's refusals arrive as RuntimeError or ValueError
            box["error"] = e

    text = tflm_oracle.captured_output(call)
    return box, text


def draw_attempt(task, attempt):
    """Attempt `attempt` at model n of `variant`: the drawn model's bytes, its inputs'
    seeds, float range and manifest fields (deterministic in the task and the attempt)."""
    _, seed, variant, n = task
    op_name, draw = VARIANTS[variant]
    rs = model_seed(seed, variant, n, attempt)
    r = random.Random(rs)
    m = Model()
    opcode, opt_type, options, ins, outs, params, fr = draw(r, variant, m)
    model_bytes = m.build(opcode, opt_type, options, ins, outs)
    seeds = [r.getrandbits(32), r.getrandbits(32)]
    extra = {"op": op_name, "variant": variant, "params": jsonable(params),
             "attempt": attempt, "draw_seed": rs}
    return model_bytes, seeds, fr, extra


def run_attempt(task, attempt):
    """Writes attempt `attempt` at the task's model and runs TFLM on it: None when TFLM
    took it, else {"error", "tflm_said"} (what it raised, and what it printed)."""
    out_root, _, variant, n = task
    out = Path(out_root) / variant / str(n)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model_bytes, seeds, fr, extra = draw_attempt(task, attempt)
    path = out / "model.tflite"
    path.write_bytes(model_bytes)
    interpreter = (tflm_oracle.LITERT_REF if VARIANTS[variant][0] in LITERT_OPS
                   else tflm_oracle.TFLM)
    box, text = quiet(lambda: tflm_oracle.run_oracle(
        path, out, seeds, float_range=fr or (-1.0, 1.0), verbose=False,
        arena_size=1 << 20, manifest_extra=extra, interpreter=interpreter))
    if "error" not in box:
        return None
    said = " | ".join(x.strip() for x in text.splitlines() if x.strip())
    e = box["error"]
    return {"error": f"{type(e).__name__}: {e}", "tflm_said": said[:400]}


def zero_fresh_allocations():
    """From here on glibc's malloc hands out zeroed blocks (M_PERTURB 255: a fresh block is
    filled with 255 ^ 255), so every model's TFLM arena starts as a new process's would,
    whatever ran before it in the same child: TFLM reads some arena bytes it never writes
    (SPACE_TO_BATCH_ND's pad value), and they must not depend on the model before."""
    m_perturb = -6
    if ctypes.CDLL(None).mallopt(m_perturb, 255) != 1:
        raise RuntimeError("mallopt(M_PERTURB) failed: the oracle needs glibc's malloc")


def batch_child(batch, start, attempts, pipe):
    """In a forked child: the models of `batch` from `start` on, each from attempt
    `attempts[i]` until TFLM takes one; a line of JSON on `pipe` after every attempt."""
    for i in range(start, len(batch)):
        for attempt in range(attempts[i], MAX_ATTEMPTS):
            try:
                error = run_attempt(batch[i], attempt)
            except Exception as e:  # a bug in a drawer: the whole run fails
                pipe.write(json.dumps({"i": i, "fatal": f"{type(e).__name__}: {e}"}) + "\n")
                pipe.flush()
                return
            pipe.write(json.dumps({"i": i, "attempt": attempt, "error": error}) + "\n")
            pipe.flush()
            if error is None:
                break
        else:
            return


def make_batch(batch):
    """Draws, writes and runs each model of `batch` (tasks) until TFLM accepts one; returns
    [(variant, n, attempts refused with reasons)] in the batch's order.

    TFLM runs in forked children, so that its crashing on a model (it segfaults on some
    legal ones) is a refusal rather than the end of the run: one child runs models until
    it is done or dies; the attempt a dead child was on is counted as refused (the signal
    that killed it as the reason), and a fresh child takes the rest from there. The child
    shares the parent's pages until it writes one: a collection in the child would touch
    (and so copy) every object's page, so the parent's objects are frozen out of
    collection and the child collects nothing."""
    refusals = [[] for _ in batch]
    done = [False] * len(batch)
    start = 0
    while start < len(batch):
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            gc.disable()
            code = 0
            try:
                zero_fresh_allocations()
                with os.fdopen(write_end, "w") as pipe:
                    batch_child(batch, start, [len(r) for r in refusals], pipe)
            except BaseException:
                code = 4
            os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            for line in pipe:
                report = json.loads(line)
                i = report["i"]
                if "fatal" in report:
                    os.waitpid(pid, 0)
                    raise RuntimeError(f"{batch[i][2]} {batch[i][3]}: {report['fatal']}")
                if report["error"] is None:
                    done[i] = True
                else:
                    params = draw_attempt(batch[i], report["attempt"])[3]["params"]
                    refusals[i].append({"attempt": report["attempt"], "params": params,
                                        **report["error"]})
        _, status = os.waitpid(pid, 0)
        while start < len(batch) and done[start]:
            start += 1
        if start == len(batch):
            break
        i = start
        if len(refusals[i]) >= MAX_ATTEMPTS:
            raise RuntimeError(f"{batch[i][2]} {batch[i][3]}: TFLM refused {MAX_ATTEMPTS} "
                               f"drawn models in a row: {refusals[i][-1]}")
        if os.WIFSIGNALED(status):
            error = {"error": f"TFLM crashed: signal {os.WTERMSIG(status)}", "tflm_said": ""}
        else:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
            error = {"error": f"the oracle's child exited with {code}", "tflm_said": ""}
        attempt = len(refusals[i])
        params = draw_attempt(batch[i], attempt)[3]["params"]
        refusals[i].append({"attempt": attempt, "params": params, **error})
    return [(task[2], task[3], r) for task, r in zip(batch, refusals)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--out", type=Path, required=True)
    p.add_argument("--count", type=int, default=100, help="models per variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--only", nargs="*", default=None, help="variants (default: all)")
    args = p.parse_args(argv)
    variants = args.only or list(VARIANTS)
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v}; known: {', '.join(VARIANTS)}")
    start = time.monotonic()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    tasks = [(str(args.out), args.seed, v, n) for v in variants for n in range(args.count)]
    batches = [tasks[k:k + BATCH] for k in range(0, len(tasks), BATCH)]
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(make_batch, batches, chunksize=1)
    else:
        results = [make_batch(b) for b in batches]
    results = [result for batch in results for result in batch]
    summary = {"seed": args.seed, "count": args.count, "variants": {}}
    for v in variants:
        summary["variants"][v] = {"op": VARIANTS[v][0], "models": args.count, "refused": []}
    for v, n, refusals in results:
        for ref in refusals:
            summary["variants"][v]["refused"].append({"model": n, **ref})
    elapsed = time.monotonic() - start
    summary["seconds"] = round(elapsed, 1)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{'variant':34} {'models':>6} {'TFLM refused (redrawn)':>23}")
    total_refused = 0
    for v, info in summary["variants"].items():
        total_refused += len(info["refused"])
        print(f"{v:34} {info['models']:>6} {len(info['refused']):>23}")
    print(f"{len(tasks)} models, {total_refused} TFLM refusals redrawn, {elapsed:.1f} s, "
          f"into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
