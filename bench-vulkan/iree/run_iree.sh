#!/usr/bin/env bash
# Benchmark the IREE (3.13.0) vulkan-spirv modules in this directory on the
# first Vulkan device. Usage (from anywhere, e.g. repo root):
#   bash .gl/iree/run_iree.sh
# Env overrides:
#   IREE_DEVICE        HAL device URI (default: vulkan; e.g. vulkan://0)
#   IREE_REPS          benchmark repetitions per model (default: 5)
#   IREE_MIN_TIME      --benchmark_min_time per repetition (default: 0.2s)
#   IREE_TIMEOUT       per-model timeout in seconds (default: 60)
#   IREE_MODELS        space-separated subset of model names (default: all)
#   IREE_HAL_VULKAN_LIBVULKAN_PATH  path to the carried libvulkan.so.1 (file or
#                      dir); if unset, VULKAN_LOADER_DIR or LD_LIBRARY_PATH /
#                      the system search path is used.
#   VK_ICD_FILENAMES   standard loader variable, passed through untouched.
set -u
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$DIR/bin"
BENCH="$BIN/iree-benchmark-module"
RUNM="$BIN/iree-run-module"
DEVICE="${IREE_DEVICE:-vulkan}"
REPS="${IREE_REPS:-5}"
MINT="${IREE_MIN_TIME:-0.2s}"
TMO="${IREE_TIMEOUT:-60}"
TMP="$(mktemp -d /tmp/iree_bench.XXXXXX)"

chmod +x "$BENCH" "$RUNM" 2>/dev/null || true

# Fallback: if the extracted binary cannot run, install the wheel (if carried).
if ! "$BENCH" --help >/dev/null 2>&1; then
  WHL="$(ls "$DIR"/whl/iree_base_runtime-*.whl 2>/dev/null | head -1)"
  if [ -n "$WHL" ]; then
    echo "# extracted binary failed; installing $WHL into $TMP/site"
    python3 -m pip install --no-index --no-deps --target "$TMP/site" "$WHL" >/dev/null
    BENCH="$TMP/site/iree/_runtime_libs/iree-benchmark-module"
    RUNM="$TMP/site/iree/_runtime_libs/iree-run-module"
    chmod +x "$BENCH" "$RUNM"
  else
    echo "ERROR: $BENCH does not run and no wheel in $DIR/whl"; "$BENCH" --help 2>&1 | head -5; exit 1
  fi
fi

if [ -n "${VULKAN_LOADER_DIR:-}" ]; then
  export LD_LIBRARY_PATH="$VULKAN_LOADER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export IREE_HAL_VULKAN_LIBVULKAN_PATH="${IREE_HAL_VULKAN_LIBVULKAN_PATH:-$VULKAN_LOADER_DIR}"
fi

echo "################ IREE Vulkan benchmark ################"
echo "# runtime: $BENCH"
echo "# device: $DEVICE  reps: $REPS  min_time: $MINT"
"$BENCH" --list_devices=vulkan 2>&1 | sed 's/^/# /'

SUMMARY="$TMP/summary.txt"
: > "$SUMMARY"
while IFS='|' read -r name func inputs src; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ -n "${IREE_MODELS:-}" ] && ! [[ " $IREE_MODELS " == *" $name "* ]]; then continue; fi
  vmfb="$DIR/$name.vmfb"
  echo
  echo "==================== IREE vulkan: $name ($src) ===================="
  if [ ! -f "$vmfb" ]; then echo "MISSING $vmfb"; echo "$name MISSING" >> "$SUMMARY"; continue; fi
  inargs=(); for i in $inputs; do inargs+=("--input=$i"); done
  # One functional run (prints outputs; int8 results are not checked here).
  timeout "$TMO" "$RUNM" --device="$DEVICE" --module="$vmfb" --function="$func" "${inargs[@]}" 2>&1 | tail -n 4
  json="$TMP/$name.json"
  timeout "$TMO" "$BENCH" --device="$DEVICE" --module="$vmfb" --function="$func" "${inargs[@]}" \
      --benchmark_repetitions="$REPS" --benchmark_min_time="$MINT" \
      --benchmark_report_aggregates_only=true \
      --benchmark_out="$json" --benchmark_out_format=json > "$TMP/$name.log" 2>&1
  rc=$?
  grep -E "_(mean|median|stddev) " "$TMP/$name.log" || tail -n 15 "$TMP/$name.log"
  if [ $rc -ne 0 ] || [ ! -s "$json" ]; then
    echo "RESULT $name FAILED rc=$rc"; echo "$name FAILED rc=$rc" >> "$SUMMARY"; continue
  fi
  python3 - "$json" "$name" >> "$SUMMARY" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
agg = {}
for b in d.get("benchmarks", []):
    if b.get("run_type") == "aggregate" and "real_time" in b["name"]:
        agg[b.get("aggregate_name")] = b["real_time"] * scale[b.get("time_unit", "ns")]
print(f"{name} mean_ms={agg.get('mean', float('nan')):.4f} median_ms={agg.get('median', float('nan')):.4f} stddev_ms={agg.get('stddev', float('nan')):.4f}")
PY
  echo "RESULT $(tail -n 1 "$SUMMARY")"
done < "$DIR/models.txt"

echo
echo "################ IREE vulkan summary (real time per inference) ################"
cat "$SUMMARY"
rm -rf "$TMP"
