#!/usr/bin/env bash
# Runs on the GPU machine: which cuDNN convolution algorithm each build runs, per direction and
# shape, read from cuDNN's own API log (CUDNN_LOGLEVEL_DBG=3), so builds that cannot print their
# choices (an earlier tree) can be compared too. One short cudnn bench per build and model.
# Usage: scripts/device/cudnn_choices.sh MODEL:BATCH NAME=PCNN_BINARY...
set -uo pipefail
out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
case_=$1; shift
model=${case_%%:*} batch=${case_##*:}
for named in "$@"; do
  name=${named%%=*} bin=${named#*=}
  PCNN_CUDNN_LOG=1 CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$out/cudnn_api_$name.log" \
    "$bin" bench --models "$model" --batch-sizes "$batch" --backends cudnn --budget 0.5 \
    > "$out/cudnn_bench_$name.log" 2>&1
  echo "== $name: $(grep -E "^cudnn +$model +$batch " "$out/cudnn_bench_$name.log" | head -1)"
  # one record per convolution call: the function, its first tensor's dimensions, its algorithm
  awk '/function cudnnConvolution(Forward|BackwardData|BackwardFilter)\(\) called/ {
         f = $0; sub(/.*function /, "", f); sub(/\(\).*/, "", f); d = ""; next }
       f != "" && /dimA: / && d == "" { d = $0; sub(/.*val=/, "", d); sub(/;.*/, "", d); next }
       f != "" && /algo: / { a = $0; sub(/.*val=/, "", a); sub(/;.*/, "", a); print f, d, a; f = "" }' \
    "$out/cudnn_api_$name.log" | sort | uniq -c
  grep "^cudnn: " "$out/cudnn_bench_$name.log" | sort | uniq -c  # the build's own log, if it has one
  rm -f "$out/cudnn_api_$name.log"  # large; the summary above is what is kept
done
