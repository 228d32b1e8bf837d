#!/usr/bin/env bash
# A kernel change prepared without a GPU, checked and measured on the GPU machine, most telling
# first: build and the whole test suite, beside them the earlier tree's build; the conv lab's
# checks of every variant against serial; the step lab (graph-replayed training steps of LeNet-5,
# Simard 2003 and fast3x3, fp32 and bf16) in the order before, after, after with PCNN_MMA=0,
# before; compute-sanitizer (memcheck, racecheck) over the op table's convolution cases; the conv
# lab's timings of every variant on the models' convolutions (fp32 and bf16); the gemm lab; the
# same-run bench of both trees; `--recipe fast` of both, interleaved. The archive is refreshed
# after each phase: a call cut short by the device's limit still returns what was done (probably
# two calls in all: BC_SKIP below).
# Everything comes back as branch.tgz, with a summary on stdout.
# Usage: scripts/device/branch_check.sh BEFORE_TAR   (BEFORE_TAR: `git archive` of the earlier
#        tree, carried; run from this tree's root)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# BC_SKIP="check step ...": phases a second call leaves out, done by the first (check, step,
# sanitize, timings, gemm, bench, tta, train); the build and the tests always run.
wants() { [[ " ${BC_SKIP:-} " != *" $1 "* ]]; }
results_archive /tmp/pcnn-branch branch.tgz

phase "build and test; the earlier tree's build beside them"
BA_BUILD_ONLY=1 bash scripts/device/before_after.sh "$1" build-gpu > "$out/before_build.txt" 2>&1 &
before_build=$!
bash scripts/device/build_and_test.sh > "$out/build_and_test.log" 2>&1
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Failed" "$out/build_and_test.log"
[ -x build-gpu/pcnn ] || { phase "no build"; exit 1; }
cmake --build build-gpu -j "$(nproc)" -t pcnn_conv_lab pcnn_gemm_lab pcnn_step_lab \
  > "$out/labs_build.log" 2>&1 ||
  { phase "the labs did not build"; tail -20 "$out/labs_build.log"; }
wait "$before_build"
cat "$out/before_build.txt"

if wants check; then
  phase "conv lab: every variant against serial"
  timeout 120 build-gpu/bench/kernels/pcnn_conv_lab --check-only > "$out/conv_lab_check.log" 2>&1
  echo "conv lab: exit $?"; tail -3 "$out/conv_lab_check.log"
fi

if wants step; then
  phase "step lab: before, after, after without the tensor-core convolutions, before"
  before=/tmp/before/build-gpu/bench/kernels/pcnn_step_lab
  sweep=(cuda --models lenet5,simard2003,fast3x3 --batches 64,256,1024 --precisions fp32,bf16
         --graph-only)
  after=build-gpu/bench/kernels/pcnn_step_lab
  # after_fma: this tree with the tensor-core convolutions off (PCNN_MMA=0), their share.
  for run in before1 after after_fma before2; do
    case $run in
      before*) cmd=("$before") ;;
      after) cmd=("$after") ;;
      after_fma) cmd=(env PCNN_MMA=0 "$after") ;;
    esac
    timeout 150 "${cmd[@]}" "${sweep[@]}" > "$out/step_lab_$run.txt" 2>&1
    echo "step lab $run: exit $?"
  done
  # model batch precision: images/s before1 / after / after_fma / before2
  for f in before1 after after_fma before2; do
    awk -v f=$f '$1 == "cuda" { print $2, $3, $4, f, $7 }' "$out/step_lab_$f.txt"
  done | awk '{ k = $1 " " $2 " " $3; row[k] = row[k] " " $4 "=" $5 }
    END { for (k in row) print k ":" row[k] }' | sort | tee "$out/step_lab_table.txt"
fi

if wants sanitize; then
  phase "compute-sanitizer memcheck: the op table's 16-bit and convolution cases on cuda"
  # PCNN_MMA=1: the op table's cases are small, below where Auto takes the tensor cores.
  export PCNN_MMA=1
  timeout 240 compute-sanitizer --tool memcheck --print-limit 20 build-gpu/tests/pcnn_tests \
    --mode test --backend cuda --op conv2d > "$out/memcheck_conv.log" 2>&1
  echo "memcheck: exit $?"; grep -E "ERROR SUMMARY|passed" "$out/memcheck_conv.log" | tail -3
  # The tensor-core kernels' shared memory is written and read across warps between barriers
  # (racecheck is slow: the 16-bit cases only, whose names hold their precision, bf16 or fp16).
  timeout 240 compute-sanitizer --tool racecheck --print-limit 20 build-gpu/tests/pcnn_tests \
    --mode test --backend cuda --op conv2d_fused --case 16 > "$out/racecheck_conv.log" 2>&1
  echo "racecheck: exit $?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" "$out/racecheck_conv.log" | tail -3
  unset PCNN_MMA
fi

if wants timings; then
  phase "conv lab: every variant timed (fp32, bf16) on the models' convolutions, batch 64 and 1024"
  for n in 64 1024; do
    for layer in "lenet5 conv1" "lenet5 conv2" "simard conv2"; do
      timeout 150 build-gpu/bench/kernels/pcnn_conv_lab --time $n "$layer" \
        > "$out/conv_lab_${n}_${layer// /_}.txt" 2>&1
      echo "conv lab --time $n $layer: exit $?"
    done
  done
fi

if wants gemm; then
  phase "gemm lab: every tile configuration checked, the models' dense layers timed (fp32, 16 bits)"
  timeout 120 build-gpu/bench/kernels/pcnn_gemm_lab > "$out/gemm_lab.txt" 2>&1
  echo "gemm lab: exit $?"; tail -2 "$out/gemm_lab.txt"
fi

if wants bench; then
  phase "same-run bench, earlier tree against this one"
  BA_GPU_ONLY=1 BENCH_BUDGET=${BENCH_BUDGET:-0.5} \
    bash scripts/device/before_after.sh "$1" build-gpu \
    > "$out/before_after.txt" 2>&1
  tail -8 "$out/before_after.txt"
fi

if wants tta; then
  phase "time to accuracy: --recipe fast, seeds 1-10, the earlier tree and this one interleaved"
  fast=(--data .deps/device/fashion-mnist --backend cuda --recipe fast --quiet --timings)
  # A first run fills the page cache and the data cache.
  build-gpu/pcnn train "${fast[@]}" --epochs 1 --limit 1000 > /dev/null 2>&1
  for seed in 1 2 3 4 5 6 7 8 9 10; do
    for tree in before after; do
      bin=build-gpu/pcnn; [ $tree = before ] && bin=/tmp/before/build-gpu/pcnn
      /usr/bin/time -f "wall %e s" $bin train "${fast[@]}" --seed $seed \
        > "$out/tta_${tree}_$seed.txt" 2>&1
      echo "$tree seed $seed: $(grep -E '^final' "$out/tta_${tree}_$seed.txt" | cut -c1-28)" \
        "first two steps $(awk '/^first 2 steps/ { print $NF }' "$out/tta_${tree}_$seed.txt") s," \
        "$(tail -1 "$out/tta_${tree}_$seed.txt")"
    done
  done
fi

if wants train; then
  phase "training: LeNet-5 fp32 and bf16 seeds 1-3, --recipe fast seeds 1-10 with and without teardown; bf16 bench"
  data=(--data .deps/device/fashion-mnist --backend cuda)
  for p in fp32 bf16; do
    for seed in 1 2 3; do
      /usr/bin/time -f "%e s" build-gpu/pcnn train "${data[@]}" --precision $p --seed $seed \
        --quiet > "$out/train_${p}_$seed.txt" 2>&1
      echo "$p seed $seed: $(grep -E '^final' "$out/train_${p}_$seed.txt") $(tail -1 "$out/train_${p}_$seed.txt")"
    done
  done
  for teardown in with without; do
    for seed in 1 2 3 4 5 6 7 8 9 10; do
      env $([ $teardown = without ] && echo PCNN_EXIT_WITHOUT_TEARDOWN=1) /usr/bin/time -f "%e s" \
        build-gpu/pcnn train "${data[@]}" --recipe fast --seed $seed --quiet \
        > "$out/fast_${teardown}_$seed.txt" 2>&1
      echo "fast $teardown teardown seed $seed: $(grep -E '^final' "$out/fast_${teardown}_$seed.txt" | cut -c1-60) $(tail -1 "$out/fast_${teardown}_$seed.txt")"
    done
  done
  build-gpu/pcnn bench --models lenet5,simard2003 --batch-sizes 64,256,1024 --backends cuda,cudnn \
    --precision bf16 --budget 0.5 --per-layer none > "$out/bench_bf16.log" 2>&1
  grep -E "^(cudnn|cuda) +(lenet5|simard2003) +[0-9]+ +[0-9.]+ \[" "$out/bench_bf16.log"
fi

phase "done"
