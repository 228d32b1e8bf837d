#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: configure + build with every backend the
# carried files allow, then the whole test suite. Logs go to $OUT (the device tool's folder).
# Usage: scripts/device/build_and_test.sh [extra cmake args]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
cmake_gpu_args "$PWD"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
cmake -S . -B build-gpu "${gpu_args[@]}" "$@" 2>&1 | tail -25 | tee "$out/configure.log"
time cmake --build build-gpu -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
grep -E "warning" "$out/build.log" | head -20
ctest --test-dir build-gpu --output-on-failure -j 6 2>&1 | tee "$out/ctest.log" | tail -40
