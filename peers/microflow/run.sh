#!/usr/bin/env bash
# Builds MicroFlow's firmware for mps2-an386 and runs it under QEMU (-icount shift=0).
#
#   peers/microflow/run.sh [model] [profile]
#
# model:   sine | micro_speech_quantized (alias: speech) | person_detect | all (default)
# profile: release (opt-level 3) | release-z (opt-level "z") | both (default)
#
# For each model and profile, prints the firmware's result line
#   EMBER-BENCH engine=microflow model=... instructions=... stack=... mismatches=... ...
# and the ELF's footprint
#   EMBER-SIZE {"engine":"microflow","model":...,"profile":...,"flash":...,"static_ram":...,"elf":...}
# (flash = .vector_table + .text + .rodata + .data; static RAM = .data + .bss + .uninit).
# Exits non-zero if a build, a run or a size read fails.
#
# The TFLM oracle cases are read at build time from $EMBER_ORACLE_DIR (default:
# ../../target/oracle relative to this directory, i.e. Ember's target/oracle).
set -euo pipefail
cd "$(dirname "$0")"

TARGET=thumbv7em-none-eabihf
model=${1:-all}
profile=${2:-both}

case "$model" in
all) models=(sine micro_speech_quantized person_detect) ;;
speech) models=(micro_speech_quantized) ;;
sine | micro_speech_quantized | person_detect) models=("$model") ;;
*) echo "run.sh: unknown model '$model' (sine, micro_speech_quantized, person_detect, all)" >&2; exit 2 ;;
esac
case "$profile" in
both) profiles=(release release-z) ;;
release | release-z) profiles=("$profile") ;;
*) echo "run.sh: unknown profile '$profile' (release, release-z, both)" >&2; exit 2 ;;
esac

if command -v llvm-size >/dev/null; then SIZE=llvm-size
elif command -v rust-size >/dev/null; then SIZE=rust-size
elif command -v arm-none-eabi-size >/dev/null; then SIZE=arm-none-eabi-size
else echo "run.sh: no llvm-size, rust-size or arm-none-eabi-size" >&2; exit 1
fi

for p in "${profiles[@]}"; do
    for m in "${models[@]}"; do
        cargo build --quiet --profile "$p" --target "$TARGET" --bin "$m"
        elf="target/$TARGET/$p/$m"
        timeout 600 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -icount shift=0 \
            -display none -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel "$elf"
        "$SIZE" -A "$elf" | awk -v m="$m" -v p="$p" -v elf="$elf" '
            $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" { flash += $2 }
            $1 == ".data" { flash += $2; ram += $2 }
            $1 == ".bss" || $1 == ".uninit" { ram += $2 }
            END { printf "EMBER-SIZE {\"engine\":\"microflow\",\"model\":\"%s\",\"profile\":\"%s\",\"flash\":%d,\"static_ram\":%d,\"elf\":\"%s\"}\n", m, p, flash, ram, elf }'
    done
done
