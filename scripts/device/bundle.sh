#!/usr/bin/env bash
# Gathers, on this (CPU) machine, what a build on the GPU machine needs and that machine lacks:
# the header-only libraries, the ONNX node cases, zlib's, libpng's and libjpeg's headers (with
# those two shared libraries in lib/, which cmake/PcnnDependencies.cmake finds beside include/),
# the Fashion-MNIST files, and the small real-digit set (digits/digits.csv.gz: the UCI optical
# digits as scikit-learn ships them; scripts/device/digits_idx.py makes IDX files of it). Into
# .deps/device/ (git-ignored); pass that folder to the device tool's `carry` (46 MB), with
# .deps/kokkos-cuda if built. `bundle.sh digits` fetches the digits file alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.deps/device

# The digits file comes out of Debian's python3-sklearn (a 2 MB download), so it is kept when
# already there; everything else is copied afresh.
get_digits() {
  local dst="$out/digits/digits.csv.gz"
  if [ -s "$dst" ]; then echo "kept $dst"; return; fi
  local tmp
  tmp=$(mktemp -d)
  chown _apt "$tmp" 2>/dev/null || true  # else apt warns that it downloads as root
  (cd "$tmp" && apt-get download python3-sklearn >/dev/null)
  dpkg-deb -x "$tmp"/python3-sklearn_*.deb "$tmp/x"
  mkdir -p "$out/digits"
  cp "$tmp/x/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz" "$dst"
  rm -rf "$tmp"
  echo "fetched $dst"
}
if [ "${1:-}" = digits ]; then get_digits; exit 0; fi

[ -d "$out" ] && find "$out" -mindepth 1 -maxdepth 1 ! -name digits -exec rm -rf {} +
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
get_digits
du -sh "$out"
