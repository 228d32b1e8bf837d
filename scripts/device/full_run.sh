#!/usr/bin/env bash
# The GPU-machine check in as few calls as possible. Phases (default: all; always in this order):
#   build    configure + build every backend the machine allows, then the whole test suite
#   train    LeNet-5 on Fashion-MNIST, 10 epochs on cuda, the whole process timed; the one-GPU
#            NCCL path for one epoch
#   variant  scripts/device/check_variant.sh on $VARIANT (a folder of changed files), if set;
#            with VARIANT_BUILD=1 the phases after it run the variant's build
#   labs     the whole-step lab (cuda and cudnn, graph replay) on this tree
#   bench    pcnn bench: serial, openmp, cudnn, cuda (kokkos if built), lenet5 + simard2003,
#            batch 64, 256, 1024, per-layer breakdown at 1024
#   profile  scripts/device/profile_kernels.sh (ncu, per kernel; PROFILE_CASES to choose)
# Needs .deps/device (scripts/device/bundle.sh) carried along; .deps/kokkos-cuda if wanted.
# Everything is handed back as one archive, results.tgz (the device tool returns at most 8 files).
# Usage: [VARIANT=dir [VARIANT_BUILD=1]] [BUILD=build-gpu] scripts/device/full_run.sh [phase ...]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
results_folder /tmp/pcnn-out results.tgz
trap 'pack_results; cp "$out/summary.log" "$final/" 2>/dev/null' EXIT
phases=${*:-"build variant train labs bench profile"}
build=${BUILD:-build-gpu}
data=.deps/device/fashion-mnist
log() { echo "$(elapsed) $*" | tee -a "$out/summary.log"; }
has() { case " $phases " in *" $1 "*) return 0;; esac; return 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv | tee -a "$out/summary.log"
if has build; then
  log "build and test"
  bash scripts/device/build_and_test.sh > "$out/build_and_test.log" 2>&1
  grep -E "tests passed|tests failed|Passed|Failed|Skipped|\*\*\*" "$out/build_and_test.log" | tee -a "$out/summary.log"
fi
if has variant && [ -n "${VARIANT:-}" ]; then
  log "variant $VARIANT"
  bash scripts/device/check_variant.sh "$VARIANT" "$out" 2>&1 | tee -a "$out/summary.log"
  # VARIANT_BUILD=1: the later phases run the variant's build (when its tests passed).
  if [ "${VARIANT_BUILD:-0}" = 1 ] && grep -q "variant tests: exit 0" "$out/summary.log"; then
    build=/tmp/variant/build-gpu
    log "later phases use $build"
  fi
fi
pcnn=$build/pcnn
[ -x "$pcnn" ] || { log "no $pcnn"; exit 1; }
if has train || has bench; then
  $pcnn backends > "$out/backends.txt"
fi
if has train; then
  log "lenet5, cuda, defaults, whole process timed"
  cat "$out/backends.txt"
  /usr/bin/time -f "wall %e s, peak RSS %M KB" $pcnn train --backend cuda --data $data --epochs 10 \
    --log "$out/train_cuda.csv" --plot "$out/train_cuda.svg" 2>&1 | tee "$out/train_cuda.log" | tail -4 | tee -a "$out/summary.log"
  log "cudnn, same run"
  /usr/bin/time -f "wall %e s, peak RSS %M KB" $pcnn train --backend cudnn --data $data --epochs 10 \
    2>&1 | tee "$out/train_cudnn.log" | tail -3 | tee -a "$out/summary.log"
  log "one GPU through the NCCL all-reduce"
  $pcnn train --backend cuda --collective nccl --data $data --epochs 1 2>&1 | tail -2 | tee -a "$out/summary.log"
fi
if has labs; then
  log "step lab, this tree"
  timeout 150 $build/bench/kernels/pcnn_step_lab 2>&1 | tee "$out/step_lab.log" | tee -a "$out/summary.log"
  log "step lab, cudnn free to pick FFT / Winograd algorithms too"
  PCNN_CUDNN_ALGOS=all timeout 100 $build/bench/kernels/pcnn_step_lab cudnn 2>&1 | tee "$out/step_lab_cudnn_all.log" | tee -a "$out/summary.log"
  log "gemm lab"
  timeout 120 $build/bench/kernels/pcnn_gemm_lab > "$out/gemm_lab.log" 2>&1
  grep -E "failures|auto" "$out/gemm_lab.log" | tail -30 | tee -a "$out/summary.log"
fi
if has bench; then
  # BENCH_BACKENDS: a shorter list (cuda,cudnn) when the CPU backends' figures are not wanted;
  # BENCH_PRECISIONS: fp32 and the 16-bit forms, one bench each (bench_bf16.log, ...).
  backends=${BENCH_BACKENDS:-$(bench_backends "$(cat "$out/backends.txt" 2>/dev/null)")}
  for p in ${BENCH_PRECISIONS:-fp32}; do
    log "bench $p"
    tag=bench; [ "$p" = fp32 ] || tag+="_$p"
    $pcnn bench --models lenet5,simard2003 --batch-sizes 64,256,1024 --backends $backends \
      --precision "$p" --budget "${BENCH_BUDGET:-1}" --out "$out/$tag" > "$out/$tag.log" 2>&1
    tail -60 "$out/$tag.log" | grep -B2 -A20 "^backend  " | head -30 >> "$out/summary.log"
    grep -A40 "^head to head" "$out/$tag.log" | head -40 | tee -a "$out/summary.log"
  done
fi
if has profile; then
  log "profile"
  bash scripts/device/profile_kernels.sh "$build" "$out/ncu" ${PROFILE_CASES:-} 2>&1 | tee -a "$out/summary.log"
  python3 scripts/device/ncu_table.py "$out"/ncu/ncu_*.csv > "$out/ncu/kernels.md" 2>> "$out/summary.log"
fi
log "done"
