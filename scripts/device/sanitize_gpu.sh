#!/usr/bin/env bash
# Runs on the GPU machine, after a build: the cuda and cudnn test suites under compute-sanitizer,
# memcheck and racecheck, all four runs side by side (one GPU, several processes). Logs in $OUT.
#
# NCCL: the data-parallel test starts a one-rank NCCL communicator, and ncclCommInitAll probes
# its own kernel images with cudaFuncGetAttributes; the images NCCL ships for other GPUs answer
# cudaErrorNoKernelImageForDevice, which memcheck reports as API errors (4 per run, none in the
# project's code). That one test case runs apart with API-error reports off
# (--report-api-errors no); its kernels are still checked for memory errors, and every CUDA call
# of the project is checked by PCNN_CUDA_CHECK anyway, which fails the test on any error.
# Usage: [SANITIZE_TOOLS="memcheck racecheck"] [SANITIZE_TIMEOUT=540] scripts/device/sanitize_gpu.sh [BUILD]
set -uo pipefail
build=${1:-build-gpu} out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
tests=$build/tests/pcnn_tests
nccl_case="data parallel*"
run() {  # run NAME TOOL BACKEND [extra sanitizer options] -- [extra test options]
  local name=$1 tool=$2 backend=$3
  shift 3
  local san=() tst=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do san+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  tst=("$@")
  timeout "${SANITIZE_TIMEOUT:-540}" compute-sanitizer --tool "$tool" --error-exitcode 99 "${san[@]}" \
    "$tests" --backend "$backend" --test-suite=backend "${tst[@]}" > "$out/sanitize_$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$name.log" | tail -1);" \
       "$(grep -E '^\[doctest\] (test cases|assertions)' "$out/sanitize_$name.log" | tr '\n' ' ')"
}
tools=" ${SANITIZE_TOOLS:-memcheck racecheck} "
for b in cuda cudnn; do
  if [[ $tools == *" memcheck "* ]]; then
    run "memcheck_$b" memcheck "$b" -- --test-case-exclude="$nccl_case" &
    run "memcheck_${b}_nccl" memcheck "$b" --report-api-errors no -- --test-case="$nccl_case" &
  fi
  [[ $tools == *" racecheck "* ]] && run "racecheck_$b" racecheck "$b" -- --test-case-exclude="$nccl_case" &
done
wait
