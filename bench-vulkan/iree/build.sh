#!/usr/bin/env bash
# IREE 3.13's Vulkan modules of the reference models, for the peer column of
# docs/bench/vulkan.md: each .tflite -> TOSA bytecode (tosa-converter-for-tflite) -> text
# with the batch dimension fixed at 1 (three models do not compile with it dynamic) ->
# iree-compile for vulkan-spirv (ampere). Then the runtime's benchmark binaries from the
# iree-base-runtime wheel. Usage: bench-vulkan/iree/build.sh OUT_DIR [MODELS_DIR]
# (MODELS_DIR defaults to ../shared/models). Carry OUT_DIR to the GPU machine and run
# OUT_DIR/run_iree.sh there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
models="${2:-$here/../../../shared/models}"
work="$(mktemp -d)"
python3 -m venv "$work/venv"
. "$work/venv/bin/activate"
pip install -q iree-base-compiler==3.13.0 tosa-converter-for-tflite==2026.2.0
pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 -d "$work/whl" iree-base-runtime==3.13.0
mkdir -p "$out/bin"
unzip -q -o -j "$work"/whl/iree_base_runtime-*.whl iree/_runtime_libs/iree-benchmark-module \
  iree/_runtime_libs/iree-run-module -d "$out/bin"
chmod +x "$out"/bin/*
cp "$here/run_iree.sh" "$here/models.txt" "$out/"
grep -v '^#' "$here/models.txt" | while IFS='|' read -r name _ _ src; do
  tosa-converter-for-tflite "$models/$src" --bytecode -o "$work/$name.mlirbc"
  iree-opt "$work/$name.mlirbc" -o "$work/$name.dyn.mlir"
  sed -e 's/tensor<?x/tensor<1x/g' -e '/tosa.const_shape/s/values(dense<\[-1,/values(dense<[1,/' \
    "$work/$name.dyn.mlir" > "$work/$name.mlir"
  iree-compile --iree-input-type=tosa --iree-hal-target-backends=vulkan-spirv \
    --iree-vulkan-target=ampere "$work/$name.mlir" -o "$out/$name.vmfb"
done
rm -rf "$work"
