#!/usr/bin/env bash
# Gathers, on this (CPU) machine, what a build on the GPU machine needs and that machine lacks:
# the header-only libraries and zlib's headers, and the Fashion-MNIST files. Into .deps/device/
# (git-ignored); pass that folder to the device tool's `carry`, with .deps/kokkos-cuda if built.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.deps/device
rm -rf "$out"
mkdir -p "$out/include" "$out/fashion-mnist"
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/doctest "$out/include/"
cp /usr/include/zlib.h /usr/include/zconf.h "$out/include/"
cp /usr/share/datasets/fashion-mnist/*.gz "$out/fashion-mnist/"
du -sh "$out"
