#!/usr/bin/env bash
# Runs on the GPU machine: tries a kernel change against the tree as it is, in the same call.
# Copies the repository to /tmp/variant, lays the files under VARIANT_DIR over it (same relative
# paths, e.g. VARIANT_DIR/backends/cuda/gemm.cu), builds the cuda backend, its tests and the
# kernel labs there, and runs the cuda tests, the conv lab (checks every variant against serial,
# then times it) and the whole-step lab. Logs to OUT_DIR/variant_*.log.
# Usage: scripts/device/check_variant.sh VARIANT_DIR OUT_DIR
set -uo pipefail
src=$(pwd) variant=$(realpath "$1") out=$2
mkdir -p "$out"
rm -rf /tmp/variant && mkdir -p /tmp/variant
tar -C "$src" --exclude='./build*' --exclude=./.deps --exclude=./.git -cf - . | tar -C /tmp/variant -xf -
cp -r "$variant"/. /tmp/variant/
cd /tmp/variant
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPCNN_ENABLE_KOKKOS=OFF \
  > "$out/variant_build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" -t pcnn_tests pcnn_step_lab pcnn_conv_lab pcnn_gemm_lab pcnn >> "$out/variant_build.log" 2>&1 ||
  { echo "check_variant: build failed"; grep -E "error" "$out/variant_build.log" | head; exit 1; }
grep -E "spill stores" "$out/variant_build.log" | grep -v " 0 bytes spill stores" | head -5
timeout 200 build-gpu/tests/pcnn_tests --backend cuda --test-suite=backend > "$out/variant_tests.log" 2>&1
echo "variant tests: exit $?; $(grep -E 'test cases' "$out/variant_tests.log")"
timeout 150 build-gpu/bench/kernels/pcnn_conv_lab > "$out/variant_conv_lab.log" 2>&1
echo "variant conv lab: exit $?; $(grep -ciE 'fail' "$out/variant_conv_lab.log") lines with 'fail'"
timeout 120 build-gpu/bench/kernels/pcnn_step_lab cuda > "$out/variant_step_lab.log" 2>&1
echo "variant step lab: exit $?"
cat "$out/variant_step_lab.log"
