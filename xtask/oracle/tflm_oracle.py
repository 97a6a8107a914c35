#!/usr/bin/env python3
"""The TFLM oracle: TensorFlow Lite Micro's own interpreter computes a .tflite model's outputs.

Run it through `cargo xtask oracle MODEL` (which installs its pinned packages into
target/oracle-venv); by hand:

    target/oracle-venv/bin/python xtask/oracle/tflm_oracle.py MODEL -o DIR \
        [--seeds 0 1 2] [--no-zeros] [--bmp FILE]... [--inputs A.npy [B.npy ...]]...

Each *case* is one set of inputs, one .npy file per model input, run through one
interpreter (reset before every case); in order:

- `zeros`: every input all zero bytes (the value 0, not the zero point), unless --no-zeros;
- `seed<S>` for each --seeds S: the generator below;
- `bmp-<stem>` for each --bmp FILE: an 8-bit BMP's pixels, top row first, copied as raw bytes
  into the model's one int8/uint8 input (person_detect's real inputs);
- `given<I>` for the I-th --inputs group: the given .npy files, one per model input, whose
  dtype and shape must be the model's.

DIR receives `<case>.in<K>.npy` (the K-th model input as fed), `<case>.out<K>.npy` (TFLM's
K-th output) and manifest.json: the oracle's versions, the model (path, SHA-256), every input
and output tensor (index in the model's input/output list, tensor number, name, dtype,
shape, shape_signature, quantization scale/zero_point/quantized_dimension), the cases and
their files, and TFLM's arena use from print_allocations. Files already in DIR that the
manifest does not name are left alone: the manifest is what counts.

`--interpreter litert-builtin-ref` runs TensorFlow Lite's own interpreter (the
`ai-edge-litert` package) with its reference kernels instead, the oracle for the ops TFLM
does not have (RELU_N1_TO_1, RELU_0_TO_1, GELU); the manifest's `oracle.interpreter` says
which ran (`tflm` or `litert-builtin-ref`, then with `oracle.ai_edge_litert`, its version),
and such a run's arena is empty (every figure null).

The generator (reproduced by the Rust crate ember-npy, `oracle::random_input`): for seed S
(0 <= S < 2^32) and model input K, a SplitMix64 stream whose state starts at
(S << 32) + K (mod 2^64); element i of the tensor in C order takes the (i+1)-th output z:
    state += 0x9E3779B97F4A7C15
    z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    z ^= z >> 31                                  (all mod 2^64)
and becomes, by the input's dtype: int8/uint8 the top 8 bits (z >> 56) as that type, int16
the top 16 bits, int32 the top 32 bits (each reinterpreted two's complement, so uniform over
the type's full range); bool the top bit; float32 `float32(lo + ((hi - lo) * u) / 2^24)` computed in float64
with u = z >> 40 (uniform on [lo, hi), --float-range, default [-1, 1)).
"""

import argparse
import ctypes
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema_fb

DEFAULT_ARENA = 16 << 20
MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15

# TFLite tensor types the oracle handles: (manifest name, numpy dtype).
DTYPES = {
    schema_fb.TensorType.INT8: ("int8", np.dtype(np.int8)),
    schema_fb.TensorType.UINT8: ("uint8", np.dtype(np.uint8)),
    schema_fb.TensorType.INT16: ("int16", np.dtype(np.int16)),
    schema_fb.TensorType.INT32: ("int32", np.dtype(np.int32)),
    schema_fb.TensorType.FLOAT32: ("float32", np.dtype(np.float32)),
    schema_fb.TensorType.BOOL: ("bool", np.dtype(np.bool_)),
}
TYPE_NAMES = {v: k for k, v in vars(schema_fb.TensorType).items() if not k.startswith("_")}


class OracleError(Exception):
    pass


def splitmix64(seed, input_index, count):
    """The first `count` SplitMix64 outputs from state (seed << 32) + input_index."""
    state = np.uint64(((seed << 32) + input_index) & MASK64)
    with np.errstate(over="ignore"):
        z = state + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def random_input(seed, input_index, dtype, shape, float_range):
    count = int(np.prod(shape, dtype=np.int64))
    z = splitmix64(seed, input_index, count)
    if dtype == np.int8:
        v = (z >> np.uint64(56)).astype(np.uint8).view(np.int8)
    elif dtype == np.uint8:
        v = (z >> np.uint64(56)).astype(np.uint8)
    elif dtype == np.int16:
        v = (z >> np.uint64(48)).astype(np.uint16).view(np.int16)
    elif dtype == np.int32:
        v = (z >> np.uint64(32)).astype(np.uint32).view(np.int32)
    elif dtype == np.bool_:
        v = (z >> np.uint64(63)) == np.uint64(1)
    elif dtype == np.float32:
        lo, hi = float_range
        u = (z >> np.uint64(40)).astype(np.float64)
        v = (lo + ((hi - lo) * u) / 16777216.0).astype(np.float32)
    else:
        raise OracleError(f"no generator for dtype {dtype}")
    return v.reshape(shape)


def tensor_info(subgraph, position, tensor_index):
    t = subgraph.tensors[tensor_index]
    if t.type not in DTYPES:
        raise OracleError(
            f"tensor {tensor_index} has type {TYPE_NAMES.get(t.type, t.type)}, "
            "which the oracle does not handle"
        )
    name, dtype = DTYPES[t.type]
    q = t.quantization
    scale = [] if q is None or q.scale is None else [float(s) for s in q.scale]
    zero_point = [] if q is None or q.zeroPoint is None else [int(z) for z in q.zeroPoint]
    return {
        "index": position,
        "tensor": int(tensor_index),
        "name": t.name.decode() if t.name else "",
        "dtype": name,
        "shape": [int(d) for d in t.shape] if t.shape is not None else [],
        "shape_signature": None
        if t.shapeSignature is None
        else [int(d) for d in t.shapeSignature],
        "scale": scale,
        "zero_point": zero_point,
        "quantized_dimension": int(q.quantizedDimension) if q is not None else 0,
        "_dtype": dtype,
    }


class _Tensors:
    """The tensors of a subgraph, unpacked on demand (unpacking the whole model would
    unpack every weight buffer, byte by byte)."""

    def __init__(self, subgraph):
        self.subgraph = subgraph

    def __getitem__(self, index):
        return schema_fb.TensorT.InitFromObj(self.subgraph.Tensors(int(index)))


class _Subgraph:
    def __init__(self, subgraph):
        self.tensors = _Tensors(subgraph)


def model_io(model_bytes):
    model = schema_fb.Model.GetRootAsModel(model_bytes, 0)
    if model.SubgraphsLength() == 0:
        raise OracleError("the model has no subgraph")
    raw = model.Subgraphs(0)
    sg = _Subgraph(raw)
    inputs = [tensor_info(sg, k, i) for k, i in enumerate(raw.InputsAsNumpy())]
    outputs = [tensor_info(sg, k, i) for k, i in enumerate(raw.OutputsAsNumpy())]
    return inputs, outputs


def bmp_pixels(path, info):
    """An uncompressed 8-bit BMP's pixels, top row first, as the input's raw bytes."""
    data = Path(path).read_bytes()
    if len(data) < 54 or data[:2] != b"BM":
        raise OracleError(f"{path}: not a BMP file")
    offset = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    bpp = int.from_bytes(data[28:30], "little")
    compression = int.from_bytes(data[30:34], "little")
    if bpp != 8 or compression != 0 or width <= 0 or height == 0:
        raise OracleError(
            f"{path}: {width}x{height}, {bpp} bits per pixel, compression {compression}: "
            "only uncompressed 8-bit BMPs are handled"
        )
    stride = (width + 3) // 4 * 4
    rows = abs(height)
    if offset + stride * rows > len(data):
        raise OracleError(f"{path}: pixel data runs past the end of the file")
    pixels = np.frombuffer(data, np.uint8, stride * rows, offset).reshape(rows, stride)[:, :width]
    bottom_up = height > 0
    if bottom_up:
        pixels = pixels[::-1]
    if info["_dtype"] not in (np.int8, np.uint8):
        raise OracleError(f"--bmp needs an int8 or uint8 input; the model's is {info['dtype']}")
    shape = info["shape"]
    if pixels.size != int(np.prod(shape)):
        raise OracleError(
            f"{path}: {width}x{rows} pixels do not fill the input of shape {shape}"
        )
    array = np.ascontiguousarray(pixels).view(info["_dtype"]).reshape(shape)
    return array, {
        "source": str(Path(path).resolve()),
        "width": width,
        "height": rows,
        "pixel_offset": offset,
        "bottom_up": bottom_up,
    }


def load_given(path, info):
    a = np.load(path, allow_pickle=False)
    if a.dtype != info["_dtype"] or list(a.shape) != info["shape"]:
        raise OracleError(
            f"{path}: {a.dtype} {list(a.shape)}, but model input {info['index']} is "
            f"{info['dtype']} {info['shape']}"
        )
    return np.ascontiguousarray(a)


def captured_output(fn):
    """Runs fn() with file descriptors 1 and 2 sent to a file; returns what was written."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as tmp:
        saved = (os.dup(1), os.dup(2))
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            fn()
        finally:
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def arena_report(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    report = {"lines": lines}
    for part in ("total", "head", "tail"):
        m = re.search(rf"Arena allocation {part} (\d+) bytes", text)
        report[part] = int(m.group(1)) if m else None
    return report


# The interpreters run_oracle can use: TFLM's (the oracle for every op TFLM has), and
# LiteRT's reference kernels for the ops TFLM lacks (RELU_N1_TO_1, RELU_0_TO_1, GELU).
TFLM = "tflm"
LITERT_REF = "litert-builtin-ref"
INTERPRETERS = (TFLM, LITERT_REF)


class LiteRTReference:
    """TensorFlow Lite's own interpreter (the `ai-edge-litert` package) with its reference
    kernels (`OpResolverType.BUILTIN_REF`; the default resolver would run XNNPACK and the
    optimized kernels, whose float results differ), behind TFLM's calls: reset, set_input,
    invoke, get_output. It reports no arena."""

    def __init__(self, model_path):
        from ai_edge_litert.interpreter import Interpreter, OpResolverType

        self._interp = Interpreter(
            model_path=str(model_path),
            experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        self._interp.allocate_tensors()
        self._inputs = [d["index"] for d in self._interp.get_input_details()]
        self._outputs = [d["index"] for d in self._interp.get_output_details()]

    def reset(self):
        self._interp.reset_all_variables()

    def set_input(self, array, index):
        self._interp.set_tensor(self._inputs[index], array)

    def invoke(self):
        self._interp.invoke()

    def get_output(self, index):
        return self._interp.get_tensor(self._outputs[index])


def run_case(interp, inputs, outputs, arrays):
    interp.reset()
    for info, a in zip(inputs, arrays):
        interp.set_input(a, info["index"])
    interp.invoke()
    result = []
    for info in outputs:
        out = np.ascontiguousarray(interp.get_output(info["index"]))
        if info["shape"] == [] and out.shape == (1,):
            # A scalar output: the wrapper hands it over as one element.
            out = out.reshape(())
        if out.dtype != info["_dtype"] or list(out.shape) != info["shape"]:
            raise OracleError(
                f"output {info['index']}: TFLM gave {out.dtype} {list(out.shape)}, the model "
                f"declares {info['dtype']} {info['shape']}"
            )
        result.append(out)
    return result


def describe(a):
    if a.size <= 16:
        return np.array2string(a.reshape(-1), separator=", ", max_line_width=200)
    return f"min {a.min()}, max {a.max()}, sum {a.astype(np.float64).sum():g}"


def run_oracle(model, out, seeds, zeros=True, bmps=(), given=(), float_range=(-1.0, 1.0),
               arena_size=DEFAULT_ARENA, verbose=True, manifest_extra=None,
               interpreter=TFLM):
    """Runs TFLM (or, with `interpreter` LITERT_REF, LiteRT's reference kernels) on the
    model at `model` for each case, writes the .npy files and manifest.json (with
    `manifest_extra`'s keys added) into `out`; returns the manifest. Raises OracleError for
    bad requests; the interpreter's own refusals raise RuntimeError (or ValueError)."""
    if interpreter not in INTERPRETERS:
        raise OracleError(f"interpreter {interpreter!r}: known are {', '.join(INTERPRETERS)}")
    model = Path(model)
    out = Path(out)
    model_bytes = model.read_bytes()
    inputs, outputs = model_io(model_bytes)
    for s in seeds:
        if not 0 <= s < 1 << 32:
            raise OracleError(f"seed {s} is not in [0, 2^32)")
    if bmps and len(inputs) != 1:
        raise OracleError(f"--bmp needs a model with one input; this one has {len(inputs)}")

    cases = []  # (name, kind, extra manifest fields, input arrays)
    if zeros:
        arrays = [np.zeros(i["shape"], i["_dtype"]) for i in inputs]
        cases.append(("zeros", "zeros", {}, arrays))
    for s in seeds:
        arrays = [random_input(s, i["index"], i["_dtype"], i["shape"], float_range)
                  for i in inputs]
        cases.append((f"seed{s}", "random", {"seed": s}, arrays))
    for path in bmps:
        array, bmp = bmp_pixels(path, inputs[0])
        cases.append((f"bmp-{path.stem}", "bmp", {"bmp": bmp}, [array]))
    for n, files in enumerate(given):
        if len(files) != len(inputs):
            raise OracleError(f"--inputs got {len(files)} file(s) for {len(inputs)} model input(s)")
        arrays = [load_given(f, i) for f, i in zip(files, inputs)]
        sources = [str(f.resolve()) for f in files]
        cases.append((f"given{n}", "given", {"sources": sources}, arrays))
    if not cases:
        raise OracleError("no case to run: give --seeds, --bmp or --inputs, or keep zeros")

    if interpreter == TFLM:
        interp = runtime.Interpreter.from_file(str(model), arena_size=arena_size)
    else:
        interp = LiteRTReference(model)
    out.mkdir(parents=True, exist_ok=True)
    manifest_cases = []
    arena = None
    first_outputs = None
    for name, kind, extra, arrays in cases:
        results = run_case(interp, inputs, outputs, arrays)
        if first_outputs is None:
            if interpreter == TFLM:
                arena = arena_report(captured_output(interp.print_allocations))
            else:
                arena = {"lines": [], "total": None, "head": None, "tail": None}
            first_outputs = results
        in_files = [f"{name}.in{k}.npy" for k in range(len(arrays))]
        out_files = [f"{name}.out{k}.npy" for k in range(len(results))]
        for f, a in zip(in_files + out_files, arrays + results):
            np.save(out / f, a, allow_pickle=False)
        manifest_cases.append({"name": name, "kind": kind, **extra,
                               "inputs": in_files, "outputs": out_files})
        if verbose:
            print(f"{name}:")
            for info, a in zip(outputs, results):
                print(f"  out{info['index']} {info['dtype']} {info['shape']}: {describe(a)}")

    # The first case once more, after all the others: the interpreter keeps no state across
    # cases (reset) and its outputs are deterministic.
    again = run_case(interp, inputs, outputs, cases[0][3])
    if any(a.tobytes() != b.tobytes() for a, b in zip(first_outputs, again)):
        raise OracleError(f"case {cases[0][0]} gave different outputs when run again")

    def public(info):
        return {k: v for k, v in info.items() if not k.startswith("_")}

    manifest = {
        "format": "ember-tflm-oracle/1",
        "oracle": {
            "interpreter": interpreter,
            "tflite_micro": importlib.metadata.version("tflite-micro"),
            **({"ai_edge_litert": importlib.metadata.version("ai-edge-litert")}
               if interpreter == LITERT_REF else {}),
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
        "model": str(model.resolve()),
        "model_sha256": hashlib.sha256(model_bytes).hexdigest(),
        "model_bytes": len(model_bytes),
        "arena_size": arena_size,
        "arena": arena,
        "generator": "splitmix64, state (seed << 32) + input index; see tflm_oracle.py",
        "float_range": list(float_range),
        "inputs": [public(i) for i in inputs],
        "outputs": [public(o) for o in outputs],
        "cases": manifest_cases,
        **(manifest_extra or {}),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if not verbose:
        return manifest
    if interpreter == TFLM:
        print(
            f"arena: total {arena['total']} B = head {arena['head']} B (activations) "
            f"+ tail {arena['tail']} B (persistent), of {arena_size} B given"
        )
    print(f"{len(cases)} cases, manifest: {out / 'manifest.json'}")
    return manifest


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    p.add_argument("--seeds", type=int, nargs="*", default=[], help="random input sets")
    p.add_argument("--no-zeros", action="store_true", help="leave out the all-zero case")
    p.add_argument("--bmp", type=Path, action="append", default=[], help="8-bit BMP input")
    p.add_argument(
        "--inputs", type=Path, nargs="+", action="append", default=[],
        help="one case from .npy files, one per model input (repeatable)",
    )
    p.add_argument("--float-range", type=float, nargs=2, default=[-1.0, 1.0],
                   metavar=("LO", "HI"), help="range of random float inputs")
    p.add_argument("--arena-size", type=int, default=DEFAULT_ARENA)
    p.add_argument("--interpreter", choices=INTERPRETERS, default=TFLM,
                   help="TFLM's, or LiteRT's reference kernels (for ops TFLM lacks)")
    args = p.parse_args(argv)

    run_oracle(args.model, args.out, args.seeds, zeros=not args.no_zeros, bmps=args.bmp,
               given=args.inputs, float_range=args.float_range, arena_size=args.arena_size,
               interpreter=args.interpreter)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OracleError as e:
        print(f"tflm_oracle: error: {e}", file=sys.stderr)
        sys.exit(1)
