#!/usr/bin/env bash
# Runs on the GPU machine: kernel-by-kernel time of the same training step in two builds (say,
# before and after a refactor), to find where a step-time difference comes from. Eager steps of
# the step lab under ncu, time only (one counter pass, so it is quick); after 600 warm-up
# launches, COUNT launches are recorded. Compare on any machine with
#   python3 scripts/device/kernel_diff.py OUT/kdiff_before_*.csv OUT/kdiff_after_*.csv
# Usage: scripts/device/kernel_diff.sh BEFORE_BUILD AFTER_BUILD backend:model:batch[:count] ...
set -uo pipefail
before=$1 after=$2; shift 2
out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -x "$ncu" ] || { echo "kernel_diff: ncu not found"; exit 1; }
for c in "$@"; do
  IFS=: read -r backend model batch count <<<"$c"
  for side in before after; do
    build=$before; [ $side = after ] && build=$after
    f="$out/kdiff_${side}_${backend}_${model}_${batch}.csv"
    timeout 120 "$ncu" --clock-control none --cache-control none --launch-skip 600 \
      --launch-count "${count:-150}" --metrics gpu__time_duration.sum --csv --print-units base \
      "$build/bench/kernels/pcnn_step_lab" "$backend" "$model" "$batch" 300 > "$f" 2> "$f.err"
    echo "kernel_diff $side $c: exit $?, $(grep -c gpu__time_duration "$f") kernels"
  done
done
