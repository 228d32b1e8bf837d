#!/usr/bin/env bash
# Builds the CPU test suite (serial + openmp; Kokkos left out, its build would double the time)
# under AddressSanitizer + UndefinedBehaviorSanitizer with -fno-sanitize-recover=all (CMake
# preset "sanitize", g++, build-sanitize/) and runs it: any sanitizer report fails a test.
# The preset keeps line tables only (-g1): reports still name function, file and line, and the
# build compiles about twice as fast as with full debug information (-g; the CLI's
# train_command.cpp 40 s against 75 on the 2-core AMD EPYC, session 32, where the whole CI run
# with -g took 45 min 6 s of its 45).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The tests side by side, one a core: under the sanitizers they take five times as long, and most
# of them run one thread or wait on a child process (313 s one at a time on 2 cores, session 20).
ctest --preset sanitize -j "$(nproc)"
