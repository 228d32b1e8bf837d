#!/usr/bin/env bash
# Runs on the GPU machine from the repository root: builds the project with the cuda (and
# cudnn) backends plus this kernel lab, then the cuda backend's tests, the labs and the
# whole-step lab, each under its own time limit, logs in $OUT. Header-only dependencies come
# from .deps/cuda-dev/include (carried; see notes/tuning-cuda.md).
# Usage: bench/kernels/device_run.sh [memcheck|racecheck] [labs...]   (default labs: all)
set -uo pipefail
out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
sanitize=""
case "${1:-}" in memcheck|racecheck) sanitize=$1; shift;; esac
labs=${*:-"tests conv gemm optimizer step"}
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
# At most 8 files come back: build.log (gpu, configure, build), tests, sanitize, one per lab.
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 | tee "$out/build.log"
ls -d /usr/include/CLI /usr/include/nlohmann /usr/include/doctest /usr/include/zlib.h 2>&1 | sed 's/^/system headers: /'
# The lab folder is not yet in bench/CMakeLists.txt (the lead adds it): add it in this copy only.
grep -q "kernels" bench/CMakeLists.txt || echo 'if(PCNN_ENABLE_CUDA)
  add_subdirectory(kernels)
endif()' >> bench/CMakeLists.txt
stamp configure
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPCNN_ENABLE_KOKKOS=OFF \
  -DPCNN_ENABLE_OPENMP=OFF -DPCNN_EXTRA_INCLUDE_DIR="$PWD/.deps/cuda-dev/include" \
  >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
grep -E "backends compiled in|cuDNN" "$out/build.log"
stamp build
targets="pcnn_conv_lab pcnn_gemm_lab pcnn_optimizer_lab"
case "$labs" in *tests*) targets="$targets pcnn_tests";; esac
case "$labs" in *step*) targets="$targets pcnn_step_lab";; esac
cmake --build build-gpu -j "$(nproc)" -t $targets -- -k 0 >> "$out/build.log" 2>&1 || grep -E "error|FAILED" "$out/build.log" | head -20
stamp built
run() {  # name limit command...   (appends to $out/name.log)
  local name=$1 limit=$2; shift 2
  stamp "run $name: $*"
  echo "== $*" >> "$out/$name.log"
  timeout "$limit" "$@" >> "$out/$name.log" 2>&1
  echo "$name: exit $? ($(wc -l < "$out/$name.log") lines)"
}
k=build-gpu/bench/kernels
case "$labs" in *tests*) run tests 240 build-gpu/tests/pcnn_tests --backend cuda --test-suite=backend;; esac
if [ -n "$sanitize" ]; then
  run sanitize 100 compute-sanitizer --tool $sanitize --print-limit 20 $k/pcnn_conv_lab --check-only
fi
case "$labs" in *conv*) run conv_lab 200 $k/pcnn_conv_lab;; esac
case "$labs" in *gemm*) run gemm_lab 120 $k/pcnn_gemm_lab;; esac
case "$labs" in *optimizer*) run optimizer_lab 60 $k/pcnn_optimizer_lab;; esac
case "$labs" in *step*) run step_lab 150 build-gpu/bench/kernels/pcnn_step_lab;; esac
stamp done
echo "== summary"
for f in "$out"/tests.log; do [ -f "$f" ] && grep -E "test cases|assertions|FAIL|ERROR" "$f" | head -25; done
[ -f "$out/sanitize.log" ] && grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" "$out/sanitize.log" | head -8
for f in conv_lab gemm_lab optimizer_lab; do [ -f "$out/$f.log" ] && grep -E "FAIL|failures|conv_lab:|gemm_lab:|optimizer_lab:" "$out/$f.log" | head -12; done
[ -f "$out/step_lab.log" ] && cat "$out/step_lab.log"
