#!/usr/bin/env python3
"""TFLM's interpreter timed on a .tflite model, for `cargo xtask bench models`.

Run by the benchmark (ember-run/benches/models.rs) with the oracle's venv
(target/oracle-venv); by hand:

    target/oracle-venv/bin/python xtask/oracle/tflm_bench.py MODEL \
        [--seed 0] [--batches 21] [--batch-ms 20] [--warmup-ms 50]

It loads the model into TFLM's Python interpreter (the `tflite-micro` package of
requirements.txt: TFLM's reference kernels), sets every input to the oracle's seeded random
input (tflm_oracle.py's generator, seed --seed), invokes once and prints one JSON line: the
versions, the inputs and outputs (each output's values, to check Ember's against), TFLM's
arena use (print_allocations) and the Python loop's own cost per call.

Then it reads commands from stdin, one per line, so that the caller can alternate its own
measurements with TFLM's in one process each:

- `time`: one measurement, answered by one JSON line. Only `interp.invoke()` is timed, on
  the inputs set once at the start: a warm-up (at least 3 calls and --warmup-ms), then
  --batches batches of N back-to-back calls, N chosen from the warm-up so that a batch
  takes about --batch-ms; each batch's time.perf_counter_ns() difference divided by N is
  one figure, and the answer gives their median, min and max (ns per call) and every figure
  (bench_loop.py, shared with iree_bench.py).
- `quit` (or end of input): exit.
"""

import argparse
import importlib.metadata
import json
import platform
import sys
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_loop import measure, noop, serve  # noqa: E402  (the timing loop the peers share)
from tflm_oracle import (  # noqa: E402  (the oracle's generator and arena report)
    DEFAULT_ARENA,
    OracleError,
    arena_report,
    captured_output,
    model_io,
    random_input,
)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batches", type=int, default=21)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--warmup-ms", type=float, default=50.0)
    p.add_argument("--float-range", type=float, nargs=2, default=[-1.0, 1.0])
    p.add_argument("--arena-size", type=int, default=DEFAULT_ARENA)
    args = p.parse_args(argv)
    if args.batches < 1:
        raise OracleError("--batches must be at least 1")

    model_bytes = args.model.read_bytes()
    inputs, outputs = model_io(model_bytes)
    interp = runtime.Interpreter.from_file(str(args.model), arena_size=args.arena_size)
    for info in inputs:
        a = random_input(args.seed, info["index"], info["_dtype"], info["shape"],
                         args.float_range)
        interp.set_input(a, info["index"])
    interp.invoke()
    arena = arena_report(captured_output(interp.print_allocations))
    results = [np.ascontiguousarray(interp.get_output(o["index"])) for o in outputs]
    batch_ns = args.batch_ms * 1e6
    warmup_ns = args.warmup_ms * 1e6
    header = {
        "format": "ember-tflm-bench/1",
        "tflite_micro": importlib.metadata.version("tflite-micro"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "model": str(args.model.resolve()),
        "model_bytes": len(model_bytes),
        "seed": args.seed,
        "arena": {k: arena[k] for k in ("total", "head", "tail")},
        "inputs": [{"dtype": i["dtype"], "shape": i["shape"]} for i in inputs],
        "outputs": [
            {"dtype": o["dtype"], "shape": o["shape"], "values": r.reshape(-1).tolist()}
            for o, r in zip(outputs, results)
        ],
        # What the timing loop costs around a call that does nothing: the floor under every
        # TFLM figure.
        "loop_overhead": measure(noop, args.batches, batch_ns, warmup_ns),
    }
    print(json.dumps(header), flush=True)
    serve(interp.invoke, args.batches, batch_ns, warmup_ns, OracleError)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OracleError as e:
        print(f"tflm_bench: error: {e}", file=sys.stderr)
        sys.exit(1)
