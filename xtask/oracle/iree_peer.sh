#!/usr/bin/env bash
# IREE's CPU runtime as a third peer for docs/bench/models.md, by hand (not part of
# `cargo xtask bench models`). Needs the oracle's venv and its seed-0 inputs
# (`cargo xtask oracle --all`), and a venv with IREE and the TOSA importer:
#
#   python3 -m venv target/iree-venv
#   target/iree-venv/bin/pip install iree-base-compiler==3.13.0 iree-base-runtime==3.13.0 \
#       tosa-converter-for-tflite==2026.2.0
#   xtask/oracle/iree_peer.sh [MODELS_DIR]   # default $EMBER_MODELS or ../shared/models
#
# For each model: every -1 in a tensor's shape_signature pinned to 1 (the dynamic batch;
# iree-compile otherwise fails on kws_ref_model and pretrainedResnet_quant), TFLite → TOSA
# (tosa-converter-for-tflite, bytecode: its textual form does not parse in IREE 3.13),
# iree-compile for llvm-cpu on the host CPU, the seed-0 outputs checked against TFLM's
# (iree-run-module), then iree-benchmark-module on the synchronous single-thread device
# (local-sync): the median of 5 repetitions of the `main` call alone, inputs uploaded once.
# Prints one line per model: name, IREE µs per call, max |IREE − TFLM| of the outputs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
models=${1:-${EMBER_MODELS:-$root/../shared/models}}
iree=$root/target/iree-venv/bin
oracle_py=$root/target/oracle-venv/bin/python
work=${CARGO_TARGET_DIR:-$root/target}/iree
mkdir -p "$work"
pin='
import sys, flatbuffers
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s
m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(open(sys.argv[1], "rb").read(), 0))
for sg in m.subgraphs:
    for t in sg.tensors:
        if t.shapeSignature is not None:
            t.shapeSignature = [1 if d == -1 else int(d) for d in t.shapeSignature]
b = flatbuffers.Builder(1024)
b.Finish(m.Pack(b), file_identifier=b"TFL3")
open(sys.argv[2], "wb").write(b.Output())
'
for model in $(find "$models" -name '*.tflite' | sort); do
    s=$(basename "$model" .tflite)
    cases=$root/target/oracle/$s
    "$oracle_py" -c "$pin" "$model" "$work/$s.tflite"
    "$iree/tosa-converter-for-tflite" "$work/$s.tflite" --bytecode -o "$work/$s.mlirbc" \
        >"$work/$s.convert.log" 2>&1 || { cat "$work/$s.convert.log"; exit 1; }
    "$iree/iree-compile" "$work/$s.mlirbc" --iree-input-type=tosa \
        --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
        --iree-llvmcpu-target-cpu=host -o "$work/$s.vmfb"
    inputs=()
    for f in "$cases"/seed0.in*.npy; do inputs+=("--input=@$f"); done
    "$iree/iree-run-module" --module="$work/$s.vmfb" --function=main --device=local-sync \
        "${inputs[@]}" --output=@"$work/$s.out.npy" >/dev/null
    diff=$("$iree/python" -c "import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())" "$work/$s.out.npy" "$cases/seed0.out0.npy")
    us=$("$iree/iree-benchmark-module" --module="$work/$s.vmfb" --function=main \
        --device=local-sync "${inputs[@]}" --benchmark_repetitions=5 \
        --benchmark_min_time=0.3s --benchmark_format=json 2>/dev/null |
        "$iree/python" -c "import json, sys
b = [x for x in json.load(sys.stdin)['benchmarks'] if x.get('aggregate_name') == 'median'][0]
scale = {'ns': 1e-3, 'us': 1, 'ms': 1e3, 's': 1e6}[b['time_unit']]
print(f\"{b['real_time'] * scale:.1f}\")")
    echo "$s $us $diff"
done
