#!/usr/bin/env bash
# The end-of-session check on the GPU machine, in one call of under 10 minutes: build and test;
# then, side by side, the compute-sanitizer runs and the build of an earlier tree; the
# reliability checks; and once the GPU is quiet, the same-run bench of the earlier tree against
# this one (cuda, cudnn) and cudnn's algorithm searches against each other. Everything comes
# back as one archive, session.tgz, and a summary on stdout.
# Usage: scripts/device/session_check.sh BEFORE_TAR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
results_archive /tmp/pcnn-session session.tgz

phase "build and test"
bash scripts/device/build_and_test.sh > "$out/build_and_test.log" 2>&1
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Failed" "$out/build_and_test.log"
[ -x build-gpu/pcnn ] || { phase "no build"; exit 1; }

phase "sanitizers and the earlier tree's build, in the background"
SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-300} bash scripts/device/sanitize_gpu.sh build-gpu \
  > "$out/sanitize_summary.txt" 2>&1 &
sanitizers=$!
BA_BUILD_ONLY=1 bash scripts/device/before_after.sh "$1" build-gpu > "$out/before_build_summary.txt" 2>&1 &
before_build=$!

phase "reliability"
bash scripts/device/reliability.sh build-gpu 2>&1 | tee "$out/reliability.txt"
wait "$before_build"
wait "$sanitizers"
phase "sanitizers"; cat "$out/sanitize_summary.txt"

phase "same-run bench, earlier tree against this one"
BA_GPU_ONLY=1 BENCH_BUDGET=${BENCH_BUDGET:-0.5} bash scripts/device/before_after.sh "$1" build-gpu
for f in "$out"/bench_*_gpu*.log; do
  grep -E "^(cudnn|cuda) +(lenet5|simard2003) +[0-9]+ +[0-9.]+ \[" "$f" |
    awk -v f="$(basename "$f" .log)" '{ print $1, $2, $3, f, $4 }'
done | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{ k = $1 " " $2 " " $3; row[k] = row[k] " " $4 "=" $5 }
  END { for (k in row) print k ":" row[k] }' | sort | tee "$out/before_after_table.txt"

phase "mixed precision: LeNet-5 trained and benched in fp32, bf16 and fp16 (cuda, cudnn)"
for p in fp32 bf16 fp16; do
  build-gpu/pcnn train --backend cuda --precision "$p" --quiet --summary "$out/train_$p.json" \
    > "$out/train_$p.txt" 2>&1
  echo "$p: $(grep -E '^final|^memory' "$out/train_$p.txt" | tr '\n' ' ')"
  build-gpu/pcnn bench --models lenet5,simard2003 --batch-sizes 64,1024 --backends cuda,cudnn \
    --precision "$p" --budget 0.5 --per-layer none > "$out/bench_precision_$p.log" 2>&1
  grep -E "^(cudnn|cuda) +(lenet5|simard2003) +[0-9]+ +[0-9.]+ \[" "$out/bench_precision_$p.log"
done

phase "cudnn's algorithm searches, same binary"
for search in measure find; do
  PCNN_CUDNN_ALGO=$search PCNN_CUDNN_LOG=1 build-gpu/pcnn bench --models lenet5,simard2003 \
    --batch-sizes 64,256,1024 --backends cudnn --budget 0.5 > "$out/cudnn_$search.log" 2>&1
  echo "== $search"; grep -E "^cudnn +(lenet5|simard2003) +[0-9]+ +[0-9.]+ \[" "$out/cudnn_$search.log"
done
phase "done"
