#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for ParallelCNN and builds it into build/:
#   1. Debian packages (compiler, CMake, zlib, libpng, libjpeg, doctest, CLI11, nlohmann-json,
#      Fashion-MNIST, libonnx-testdata: the ONNX node conformance cases the test suite runs on
#      every backend; hwloc, optional, for the CPU topology in bench.json),
#   2. Kokkos with OpenMP + Serial, built from Debian's trilinos source package (cached in .deps/),
#   3. configure + build. CUDA backends are built when nvcc is found (/usr/local/cuda).
# Re-running it is cheap: installed packages, the Kokkos build and the CMake build are reused.
# Environment: PCNN_BUILD_DIR (default build), PCNN_CMAKE_ARGS (extra configure options),
#              PCNN_NO_KOKKOS=1 to skip Kokkos.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PCNN_BUILD_DIR:-build}

bash scripts/apt_install.sh g++ cmake ninja-build make zlib1g-dev libpng-dev libjpeg-dev doctest-dev \
  libcli11-dev nlohmann-json3-dev dataset-fashion-mnist libonnx-testdata dpkg-dev xz-utils \
  libhwloc-dev pkg-config

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
if [ "${PCNN_NO_KOKKOS:-0}" != 1 ] && [ -x scripts/build_kokkos.sh ]; then
  scripts/build_kokkos.sh host .deps/kokkos-host
fi

nproc_build=$(nproc)
cmake -S . -B "$build_dir" "${cmake_args[@]}" ${PCNN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$nproc_build"
"$build_dir/pcnn" backends
