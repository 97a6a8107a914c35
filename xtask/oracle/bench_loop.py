"""The timing loop `cargo xtask bench models` runs in each Python peer (tflm_bench.py,
iree_bench.py), the same as the bench's `measure` in Rust (ember-run/benches/models.rs).

Only the standard library, so that every peer's venv can import it.
"""

import json
import statistics
import sys
import time


def measure(call, batches, batch_ns, warmup_ns):
    """ns per call of `call()`: a warm-up (at least 3 calls and `warmup_ns`), then `batches`
    batches of N back-to-back calls, N chosen from the warm-up so that a batch takes about
    `batch_ns`; each batch's time.perf_counter_ns() difference over N is one figure. Returns
    their median, min and max, and each."""
    clock = time.perf_counter_ns
    start = clock()
    n = 0
    while n < 3 or clock() - start < warmup_ns:
        call()
        n += 1
    per_call = (clock() - start) / n
    calls = max(1, round(batch_ns / per_call))
    figures = []
    for _ in range(batches):
        t = clock()
        for _ in range(calls):
            call()
        figures.append((clock() - t) / calls)
    return {
        "median_ns": statistics.median(figures),
        "min_ns": min(figures),
        "max_ns": max(figures),
        "calls_per_batch": calls,
        "batches": batches,
        "figures_ns": figures,
    }


def noop():
    """A call that does nothing: `measure(noop, ...)` is the loop's own cost per call."""
    return None


def serve(call, batches, batch_ns, warmup_ns, error):
    """Answers commands from stdin, one per line: `time` with one `measure(call, ...)` as a
    JSON line on stdout; `quit` or end of input by returning; anything else raises
    `error`."""
    for line in sys.stdin:
        command = line.strip()
        if command == "time":
            print(json.dumps(measure(call, batches, batch_ns, warmup_ns)), flush=True)
        elif command in ("quit", ""):
            break
        else:
            raise error(f"unknown command `{command}`")
