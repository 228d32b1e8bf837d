#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: the checks and timings of the convolution
# backward's one-image-a-lane kernels (conv2d_backward_lanes.cu) in one call of about 330 s, with
# the labs built there (about 190 s on 16 cores). Both are Auto's on 5x5 stride-2 layers
# (PCNN_CONV_LANES unset or 2; 1: the data gradient alone, 0: neither), the data gradient where
# its blocks fill half the GPU. Needs scripts/device/bundle.sh's include/, lib/ and onnx-node/ carried
# (30 MB; the whole .deps/device, with the data sets, outgrows the device tool's 64 MiB):
#   carry [".deps/device/include", ".deps/device/lib", ".deps/device/onnx-node"]
# Hands back results.tgz and summary.log.
# Usage: scripts/device/lanes_check.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
b=/tmp/build-lanes
lab_session /tmp/pcnn-lanes $b pcnn_step_lab pcnn_conv_lab pcnn_tests
log "cuda suite: as is, Split forced, Split forced with both lanes kernels"
for mode in "" "PCNN_CONV_SPLIT=1" "PCNN_CONV_SPLIT=1 PCNN_CONV_LANES=2"; do
  env $mode timeout 120 $b/tests/pcnn_tests --backend cuda --test-suite=backend > "$out/suite.log" 2>&1
  log "  ${mode:-as is}: exit $?; $(grep 'test cases' "$out/suite.log")"
done
log "conv lab: every variant on every case, then Simard 2003's conv2 at 1024 and 64"
timeout 90 $b/bench/kernels/pcnn_conv_lab --check-only > "$out/conv_check.log" 2>&1
log "  checks: exit $?; $(grep checked "$out/conv_check.log")"
for n in 1024 64; do
  timeout 100 $b/bench/kernels/pcnn_conv_lab --time $n "simard conv2" > "$out/conv_lab_$n.log" 2>&1
  grep -E "split (auto|no lanes|lanes)|unfused|  mma" "$out/conv_lab_$n.log" | cut -c1-140 | tee -a "$out/summary.log"
done
step_lab_checks $b PCNN_CONV_LANES "0 1 2" simard2003
log "ncu, Simard 2003 at 1024, both lanes kernels, Split forced (dw and dx apart)"
PCNN_CONV_SPLIT=1 PCNN_CONV_LANES=2 bash scripts/device/profile_kernels.sh $b "$out/ncu" \
  cuda:simard2003:1024 cuda:simard2003:1024:bf16 2>&1 | tee -a "$out/summary.log"
python3 scripts/device/ncu_table.py "$out"/ncu/*.csv > "$out/kernels.md" 2>&1
grep -E "###|lanes|backward" "$out/kernels.md" | cut -c1-200 | tee -a "$out/summary.log"
log done
