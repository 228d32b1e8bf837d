#!/usr/bin/env bash
# Runs on the GPU machine, after a build: the reliability checks that need a GPU.
#   - out of device memory: a network whose activations at batch 32768 need ~250 GB must end in
#     one line naming the batch size and the memory, exit 1 (not a CUDA error or a crash);
#   - the one-GPU NCCL path trains an epoch (the all-reduce loaded at run time);
#   - which error-filtering options this compute-sanitizer has (scripts/device/sanitize_gpu.sh
#     runs the suites under it: long, so it is a call of its own).
# Logs in $OUT; a summary on stdout.
# Usage: scripts/device/reliability.sh [BUILD]
set -uo pipefail
build=${1:-build-gpu} out=${OUT:-/tmp/pcnn-out}
mkdir -p "$out"
pcnn=$build/pcnn

layers='{"type": "conv", "units": 64, "kernel": 3, "pad": 1, "act": "relu"}'
for _ in $(seq 19); do layers+=', {"type": "conv", "units": 64, "kernel": 3, "pad": 1, "act": "relu"}'; done
printf '{"name": "deep64", "input": [1, 28, 28], "classes": 10, "layers": [%s, {"type": "flatten"}, {"type": "dense", "units": 10}]}\n' \
  "$layers" > "$out/deep64.json"
data=()  # the GPU machine has no Debian data set: scripts/device/bundle.sh carries one along
[ -d .deps/device/fashion-mnist ] && data=(--data .deps/device/fashion-mnist)
for be in cuda cudnn; do
  "$pcnn" train --backend "$be" "${data[@]}" --model "$out/deep64.json" --batch-size 32768 --epochs 1 \
    > "$out/oom_$be.out" 2> "$out/oom_$be.err"
  echo "out of memory on $be: exit $?, $(wc -l < "$out/oom_$be.err") line(s): $(cat "$out/oom_$be.err")"
done

nccl=("$pcnn" train --backend cuda "${data[@]}" --collective nccl --epochs 1 --quiet)
echo "one-GPU NCCL path: $("${nccl[@]}" 2>&1 | tail -1)"

compute-sanitizer --help 2>&1 | grep -E -i -A2 "suppress|filter|api-error" \
  > "$out/compute_sanitizer_options.txt"
