#!/usr/bin/env bash
# Builds the libFuzzer programs (CMake preset "fuzz": clang, ASan + UBSan, build-fuzz/) and runs
# each for a bounded time, starting from the committed seeds in fuzz/corpus/<target>. Inputs the
# fuzzer finds interesting go to build-fuzz/work/<target> (never into the repo). A crash, leak,
# sanitizer report, timeout or out-of-memory fails the script; the input is saved as
# build-fuzz/findings/<target>/crash-* -- add it to fuzz/regressions/<target>/ with the fix.
# Environment: PCNN_FUZZ_SECONDS (every target's time; default: each target's own, below),
# PCNN_FUZZ_TARGETS (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${PCNN_FUZZ_TARGETS:-idx model_file model_spec cifar png jpeg}
# Seconds per target in CI (2 cores, 45 min for all of .ci/run): 60 for the first three; 45 for
# each image decoder (libpng, libjpeg: their own code is not instrumented, so coverage grows
# only through our calls and levels off early) and 40 for the CIFAR loader (fixed-size records,
# little to explore).
seconds_of() {
  if [ -n "${PCNN_FUZZ_SECONDS:-}" ]; then echo "$PCNN_FUZZ_SECONDS"; return; fi
  case $1 in
    cifar) echo 40 ;;
    png | jpeg) echo 45 ;;
    *) echo 60 ;;
  esac
}

# clang for -fsanitize=fuzzer, compiler-rt for libFuzzer, ASan and UBSan, llvm for the
# symbolizer, libomp for the openmp backend built with clang.
bash scripts/apt_install.sh clang libclang-rt-14-dev llvm libomp-dev
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
  work=build-fuzz/work/$t findings=build-fuzz/findings/$t
  mkdir -p "$work" "$findings"
  seconds=$(seconds_of "$t")
  echo "fuzz: $t for ${seconds} s"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  # -timeout: one input running 25 s is a finding (the targets keep each run to milliseconds).
  if ! build-fuzz/fuzz/pcnn_fuzz_"$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" "$work" "fuzz/corpus/$t" \
       >"build-fuzz/$t.log" 2>&1; then
    echo "fuzz: $t FOUND A FAILURE; the end of build-fuzz/$t.log:"
    tail -40 "build-fuzz/$t.log"
    ls -l "$findings"
    status=1
  fi
  grep -E "DONE|stat::number_of_executed_units|stat::peak_rss_mb" "build-fuzz/$t.log" || true
done
exit $status
