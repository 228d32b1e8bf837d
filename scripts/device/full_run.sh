#!/usr/bin/env bash
# The whole GPU-machine check in one call: build every backend, run the test suite, train LeNet-5
# for 10 epochs on cuda (timing the whole process), the one-GPU NCCL path, and the bench.
# Needs .deps/device (scripts/device/bundle.sh) and .deps/kokkos-cuda carried along.
set -uo pipefail
# Everything is written to a scratch folder and handed back as one archive (the device tool
# returns at most 8 files).
final=${OUT:-/tmp}
out=/tmp/pcnn-out
mkdir -p "$out"
export OUT=$out
trap 'tar czf "$final/results.tgz" -C "$out" . ; cp "$out/bench.log" "$final/" 2>/dev/null' EXIT
data=.deps/device/fashion-mnist
bash scripts/device/build_and_test.sh > "$out/build_and_test.log" 2>&1
tail -25 "$out/build_and_test.log"
pcnn=build-gpu/pcnn
[ -x "$pcnn" ] || exit 1
$pcnn backends | tee "$out/backends.txt"
echo "== lenet5, cuda, defaults, whole process timed"
/usr/bin/time -f "wall %e s, peak RSS %M KB" $pcnn train --backend cuda --data $data --epochs 10 \
  --log "$out/train_cuda.csv" --plot "$out/train_cuda.svg" 2>&1 | tee "$out/train_cuda.log"
echo "== one GPU through the NCCL all-reduce"
$pcnn train --backend cuda --collective nccl --data $data --epochs 1 2>&1 | tail -3
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0
echo "== bench"
$pcnn bench --models lenet5,simard2003 --batch-sizes 64,1024 --budget 1 --out "$out/bench" \
  > "$out/bench.log" 2>&1
tail -40 "$out/bench.log"
