#!/usr/bin/env bash
# Gathers, on this (CPU) machine, what a build on the GPU machine needs and that machine lacks:
# the header-only libraries, the ONNX node cases, zlib's, libpng's and libjpeg's headers (with
# those two shared libraries in lib/, which cmake/PcnnDependencies.cmake finds beside include/),
# and the Fashion-MNIST files. Into .deps/device/ (git-ignored); pass that folder to the device
# tool's `carry` (46 MB), with .deps/kokkos-cuda if built.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.deps/device
rm -rf "$out"
mkdir -p "$out/include" "$out/fashion-mnist"
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/doctest "$out/include/"
cp /usr/include/zlib.h /usr/include/zconf.h "$out/include/"
cp /usr/include/png.h /usr/include/pngconf.h /usr/include/pnglibconf.h /usr/include/jpeglib.h \
  /usr/include/jmorecfg.h /usr/include/jerror.h /usr/include/x86_64-linux-gnu/jconfig.h "$out/include/"
mkdir -p "$out/lib"
cp -L /usr/lib/x86_64-linux-gnu/libpng16.so.16 /usr/lib/x86_64-linux-gnu/libjpeg.so.62 "$out/lib/"
cp /usr/share/datasets/fashion-mnist/*.gz "$out/fashion-mnist/"
# The ONNX node cases the backend suites run (-DPCNN_ONNX_NODE_DIR=$PWD/.deps/device/onnx-node).
cp -r /usr/share/libonnx-testdata/data/node "$out/onnx-node"
du -sh "$out"
