#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: the checks and timings of one measuring
# switch of the cuda backend (an environment variable that turns a kernel choice off) in one call
# of about 300 s, the labs built there (about 150-185 s on 16 cores). In order: the cuda suite
# under each value, the kernel lab's checks and timings, the step lab with the values interleaved
# (twice, fp32 and bf16, on $MODELS), cuda and cudnn in the same run, `--recipe fast` under each
# value in turn where Fashion-MNIST was carried, ncu of both models at batch 1024 (not with
# SKIP_NCU=1, where the switch leaves those steps alone).
# Needs scripts/device/bundle.sh's include/ and lib/ carried, and onnx-node/ for the suite's
# ONNX cases (or .deps/device/fashion-mnist in its place: the whole bundle is over the carry
# limit), e.g.
#   carry [".deps/device/include", ".deps/device/lib", ".deps/device/onnx-node"]
# Hands back results.tgz and summary.log.
# Usage: [MODELS=a,b] [STEP_BATCHES=64,256] [SKIP_NCU=1] scripts/device/switch_check.sh
#        VARIABLE "VALUES" LAB [LAB_ARGS...]
#   e.g. scripts/device/switch_check.sh PCNN_GEMM_VEC "0 1" gemm
#        MODELS=lenet5,simard2003,fast3x3 STEP_BATCHES=64,128,256,1024 \
#          scripts/device/switch_check.sh PCNN_CONV_DW_BLOCKS "0 1" conv --time 128 c3p
#        (the conv lab's checks under each value, then fast3x3's layers at 128 timed)
set -uo pipefail
var=$1 values=$2 lab=$3
shift 3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
b=/tmp/build-switch
lab_session /tmp/pcnn-switch $b pcnn pcnn_step_lab "pcnn_${lab}_lab" pcnn_tests
log "cuda suite under $var = each of: $values"
for v in $values; do
  env "$var=$v" timeout 120 $b/tests/pcnn_tests --backend cuda --test-suite=backend \
    > "$out/suite_$v.log" 2>&1
  log "  $var=$v: exit $?; $(grep 'test cases' "$out/suite_$v.log")"
done
if [ $# -gt 0 ]; then  # the lab's checks under each value, then its run with LAB_ARGS
  for v in $values; do
    env "$var=$v" timeout 100 $b/bench/kernels/pcnn_${lab}_lab --check-only \
      > "$out/${lab}_check_$v.log" 2>&1
    log "  $lab lab checks, $var=$v: exit $?; $(tail -1 "$out/${lab}_check_$v.log")"
  done
fi
log "$lab lab ${*:-(every variant checked, the layers of the models timed)}, under each value"
for v in $values; do
  env "$var=$v" timeout 150 $b/bench/kernels/pcnn_${lab}_lab "$@" > "$out/${lab}_lab_$v.log" 2>&1
  log "  $var=$v: exit $?; $(tail -1 "$out/${lab}_lab_$v.log")"
done
step_lab_checks $b "$var" "$values" "${MODELS:-lenet5,simard2003}"
recipe_fast_runs $b "1 2 3 4 5" "$var" "$values"
[ "${SKIP_NCU:-0}" = 1 ] && { log done; exit 0; }
log "ncu, both models at 1024, fp32 and bf16"
bash scripts/device/profile_kernels.sh $b "$out/ncu" cuda:lenet5:1024 cuda:simard2003:1024 \
  cuda:lenet5:1024:bf16 cuda:simard2003:1024:bf16 2>&1 | tee -a "$out/summary.log"
python3 scripts/device/ncu_table.py "$out"/ncu/*.csv > "$out/kernels.md" 2>&1
grep -E "###|gemm" "$out/kernels.md" | cut -c1-160 | tee -a "$out/summary.log"
log done
