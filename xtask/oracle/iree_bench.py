#!/usr/bin/env python3
"""IREE's CPU runtime timed on a compiled model, for `cargo xtask bench models`.

Run by the benchmark (ember-run/benches/models.rs) with IREE's venv (target/iree-venv,
xtask/oracle/iree-requirements.txt), on the .vmfb that xtask/src/iree.rs compiled from the
model (TFLite → TOSA → iree-compile for llvm-cpu on the host CPU); by hand:

    target/iree-venv/bin/python xtask/oracle/iree_bench.py MODEL.vmfb --input IN0.npy ... \
        [--batches 21] [--batch-ms 20] [--warmup-ms 50]

It loads the module on IREE's `local-sync` device (the synchronous local driver: every
dispatch runs on the calling thread, so one thread), uploads each --input (the bench writes
the oracle's seed-0 inputs, the ones Ember and TFLM get) once as a device buffer, calls the
module's `main` once and prints one JSON line: the versions, `main`'s signature, the inputs,
and the outputs (each output's values, for the bench to hold against TFLM's), and the Python
loop's own cost per call.

Then it reads commands from stdin, one per line, exactly as tflm_bench.py does:

- `time`: one measurement, answered by one JSON line. Only the call of `main` is timed
  (`VmContext.invoke` on the argument list built once, with a new result list each call,
  as iree-benchmark-module does), by bench_loop.py's loop: a warm-up (at least 3 calls and
  --warmup-ms), then --batches batches of N back-to-back calls, N chosen so that a batch
  takes about --batch-ms; each batch's time over N is one figure; the answer gives their
  median, min and max (ns per call) and every figure.
- `quit` (or end of input): exit.
"""

import argparse
import importlib.metadata
import json
import platform
import sys
from pathlib import Path

import iree.runtime as rt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_loop import measure, noop, serve  # noqa: E402  (the timing loop the peers share)

# More result slots than any reference model has outputs; the list holds what `main` returns.
MAX_RESULTS = 16


class IreeBenchError(Exception):
    pass


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vmfb", type=Path)
    p.add_argument("--input", type=Path, action="append", default=[],
                   help="an input as .npy, once per `main` argument in order")
    p.add_argument("--batches", type=int, default=21)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--warmup-ms", type=float, default=50.0)
    args = p.parse_args(argv)
    if args.batches < 1:
        raise IreeBenchError("--batches must be at least 1")

    config = rt.Config("local-sync")
    module = rt.VmModule.mmap(config.vm_instance, str(args.vmfb))
    context = rt.VmContext(config.vm_instance, modules=[*config.default_vm_modules, module])
    function = module.lookup_function("main")
    if function is None:
        raise IreeBenchError(f"{args.vmfb}: no `main` function")
    inputs = [np.load(path) for path in args.input]
    arguments = rt.VmVariantList(len(inputs))
    for array in inputs:
        arguments.push_ref(rt.asdevicearray(config.device, array)._buffer_view)

    def call():
        results = rt.VmVariantList(MAX_RESULTS)
        context.invoke(function, arguments, results)
        return results

    results = call()
    outputs = [
        rt.DeviceArray(config.device, results.get_as_object(i, rt.HalBufferView)).to_host()
        for i in range(len(results))
    ]
    batch_ns = args.batch_ms * 1e6
    warmup_ns = args.warmup_ms * 1e6
    header = {
        "format": "ember-iree-bench/1",
        "iree_runtime": importlib.metadata.version("iree-base-runtime"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "vmfb": str(args.vmfb.resolve()),
        "device": "local-sync",
        "signature": function.reflection.get("iree.abi.declaration", ""),
        "inputs": [{"dtype": str(a.dtype), "shape": list(a.shape)} for a in inputs],
        "outputs": [
            {"dtype": str(o.dtype), "shape": list(o.shape),
             "values": np.ascontiguousarray(o).reshape(-1).tolist()}
            for o in outputs
        ],
        # What the timing loop costs around a call that does nothing: the floor under every
        # IREE figure.
        "loop_overhead": measure(noop, args.batches, batch_ns, warmup_ns),
    }
    print(json.dumps(header), flush=True)
    serve(call, args.batches, batch_ns, warmup_ns, IreeBenchError)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (IreeBenchError, RuntimeError, ValueError, OSError) as e:
        print(f"iree_bench: error: {e}", file=sys.stderr)
        sys.exit(1)
