#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after the build phase of full_run.sh: the
# same-run before/after bench of a change that must not change speed. Builds the earlier tree
# (a `git archive` tarball, carried) beside this one with the same options, then benches both
# binaries on this machine: every backend once each, then the GPU backends again in the order
# before, after, before, after, so that drift between runs shows. Logs and bench files in $OUT.
# Usage: [BA_GPU_ONLY=1 | BA_BUILD_ONLY=1] scripts/device/before_after.sh BEFORE_TAR [AFTER_BUILD]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tarball=$(realpath "$1") after=${2:-build-gpu} out=${OUT:-/tmp/pcnn-out}
src=$PWD data=$PWD/.deps/device/fashion-mnist
mkdir -p "$out"
before=/tmp/before/build-gpu/pcnn
# The earlier tree is built once per machine: a second call (BA_GPU_ONLY after BA_BUILD_ONLY,
# say) reuses the binary when it came from the same tarball.
stamp=$(sha1sum "$tarball" | cut -d' ' -f1)
if [ ! -x "$before" ] || [ "$(cat /tmp/before/.tarball 2>/dev/null)" != "$stamp" ]; then
  rm -rf /tmp/before && mkdir -p /tmp/before && tar -C /tmp/before -xf "$tarball"
  ln -s "$src/.deps" /tmp/before/.deps
  cmake_gpu_args "$src"
  (cd /tmp/before && cmake -S . -B build-gpu "${gpu_args[@]}" > "$out/before_build.log" 2>&1 &&
    cmake --build build-gpu -j "$(nproc)" -t pcnn_cli pcnn_step_lab \
      >> "$out/before_build.log" 2>&1) ||
    { echo "before_after: the earlier tree did not build"; tail -20 "$out/before_build.log"; exit 1; }
  echo "$stamp" > /tmp/before/.tarball
fi
[ "${BA_BUILD_ONLY:-0}" = 1 ] && exit 0  # BA_BUILD_ONLY=1: just build the earlier tree there
all=$(bench_backends "$("$after/pcnn" backends)")
# The same step on both sides: a tree whose bench has --optimizer (default adam, as train) is
# told the earlier bench's SGD (BA_AFTER_ARGS replaces that when the earlier tree has it too).
after_args=${BA_AFTER_ARGS-"--optimizer sgd"}
bench() {  # bench NAME BINARY BACKENDS
  local extra=""
  [[ $1 == after* ]] && extra=$after_args
  # shellcheck disable=SC2086
  "$2" bench --models lenet5,simard2003 --batch-sizes 64,256,1024 --backends "$3" $extra \
    --budget "${BENCH_BUDGET:-1}" --out "$out/bench_$1" > "$out/bench_$1.log" 2>&1
  echo "bench $1: exit $?"
}
if [ "${BA_GPU_ONLY:-0}" != 1 ]; then  # BA_GPU_ONLY=1: a GPU-only change, skip the CPU round
  bench before_all "$before" "$all"
  bench after_all "$after/pcnn" "$all"
fi
for round in 1 2; do
  bench before_gpu$round "$before" cudnn,cuda
  bench after_gpu$round "$after/pcnn" cudnn,cuda
done
