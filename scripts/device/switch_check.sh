#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: the checks and timings of one measuring
# switch of the cuda backend (an environment variable that turns a kernel choice off) in one call
# of about 300 s, the labs built there (about 150 s on 16 cores). In order: the cuda suite under
# each value, the kernel lab's checks and timings, the step lab with the values interleaved
# (twice, fp32 and bf16), cuda and cudnn in the same run, ncu of both models at batch 1024.
# Needs scripts/device/bundle.sh's include/, lib/ and onnx-node/ carried:
#   carry [".deps/device/include", ".deps/device/lib", ".deps/device/onnx-node"]
# Hands back results.tgz and summary.log.
# Usage: scripts/device/switch_check.sh VARIABLE "VALUES" LAB
#   e.g. scripts/device/switch_check.sh PCNN_GEMM_VEC "0 1" gemm
set -uo pipefail
var=$1 values=$2 lab=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
b=/tmp/build-switch
lab_session /tmp/pcnn-switch $b pcnn_step_lab "pcnn_${lab}_lab" pcnn_tests
log "cuda suite under $var = each of: $values"
for v in $values; do
  env "$var=$v" timeout 120 $b/tests/pcnn_tests --backend cuda --test-suite=backend \
    > "$out/suite_$v.log" 2>&1
  log "  $var=$v: exit $?; $(grep 'test cases' "$out/suite_$v.log")"
done
log "$lab lab: every variant checked, the models' layers timed"
timeout 150 $b/bench/kernels/pcnn_${lab}_lab > "$out/${lab}_lab.log" 2>&1
log "  exit $?; $(tail -1 "$out/${lab}_lab.log")"
step_lab_checks $b "$var" "$values" lenet5,simard2003
log "ncu, both models at 1024, fp32 and bf16"
bash scripts/device/profile_kernels.sh $b "$out/ncu" cuda:lenet5:1024 cuda:simard2003:1024 \
  cuda:lenet5:1024:bf16 cuda:simard2003:1024:bf16 2>&1 | tee -a "$out/summary.log"
python3 scripts/device/ncu_table.py "$out"/ncu/*.csv > "$out/kernels.md" 2>&1
grep -E "###|gemm" "$out/kernels.md" | cut -c1-160 | tee -a "$out/summary.log"
log done
