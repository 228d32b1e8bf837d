#!/usr/bin/env bash
# Builds the Kokkos the kokkos backend needs and installs it into a prefix inside the repo.
#
#   scripts/build_kokkos.sh [host|cuda] [PREFIX]
#     host: Serial + OpenMP, built with the system C++ compiler  (default PREFIX .deps/kokkos-host)
#     cuda: Serial + OpenMP + CUDA for sm_90, built with nvcc_wrapper (default .deps/kokkos-cuda)
#
# Debian's libtrilinos-kokkos-dev is Serial-only, so Kokkos 3.4.01 is built from Debian's own
# source package `trilinos` (13.2.0-4), of which only packages/kokkos is unpacked. The tarball is
# cached in .deps/src/; a prefix that already holds an install from the same source, patch and
# options is left alone (the script is cheap to call from scripts/setup.sh every time).
# Environment: PCNN_JOBS (default 2), CUDA_ROOT (default /usr/local/cuda), PCNN_KOKKOS_FORCE=1.
set -euo pipefail

flavor=${1:-host}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${2:-$repo/.deps/kokkos-$flavor}
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
jobs=${PCNN_JOBS:-2}
cuda_root=${CUDA_ROOT:-/usr/local/cuda}

src_cache=$repo/.deps/src
kokkos_src=$src_cache/kokkos-3.4.01
tarball=trilinos_13.2.0.orig.tar.gz
patch_file=$repo/scripts/kokkos/kokkos-3.4.01-cuda13.patch

say() { echo "build_kokkos: $*"; }
die() { echo "build_kokkos: error: $*" >&2; exit 1; }

case $flavor in
  host)
    spaces=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
    compiler=(-DCMAKE_CXX_COMPILER="${CXX:-c++}")
    need_device=OPENMP ;;
  cuda)
    [ -x "$cuda_root/bin/nvcc" ] || die "no nvcc at $cuda_root/bin/nvcc (set CUDA_ROOT)"
    export CUDA_ROOT=$cuda_root PATH=$cuda_root/bin:$PATH
    # Kokkos 3.4 knows no Hopper: the patch adds Kokkos_ARCH_HOPPER90 (-arch=sm_90).
    spaces=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_CUDA=ON
            -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_HOPPER90=ON)
    compiler=(-DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper")
    need_device=CUDA ;;
  *) die "usage: $0 [host|cuda] [PREFIX]" ;;
esac
options=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF
         -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF
         "${spaces[@]}")

# ---- 0. a system Kokkos with the needed execution space makes all of this unnecessary --------
if [ "${PCNN_KOKKOS_FORCE:-0}" != 1 ]; then
  probe=$(mktemp -d)
  cat > "$probe/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(probe LANGUAGES NONE)
find_package(Kokkos QUIET CONFIG)
if(Kokkos_FOUND AND "$need_device" IN_LIST Kokkos_DEVICES)
  message(STATUS "PCNN_SYSTEM_KOKKOS=\${Kokkos_DIR} \${Kokkos_VERSION} \${Kokkos_DEVICES}")
endif()
EOF
  found=$(cmake -S "$probe" -B "$probe/b" 2>/dev/null | sed -n 's/^-- PCNN_SYSTEM_KOKKOS=//p' || true)
  rm -rf "$probe"
  if [ -n "$found" ]; then
    say "using the system Kokkos ($found); cmake/PcnnKokkos.cmake finds it too"
    exit 0
  fi
fi

# ---- 1. cached install? ------------------------------------------------------------------------
stamp_text="kokkos 3.4.01 from trilinos 13.2.0-4; flavor $flavor; patch $(sha256sum "$patch_file" | cut -c1-16); ${options[*]}"
if [ -f "$prefix/.pcnn-kokkos-stamp" ] && [ "$(cat "$prefix/.pcnn-kokkos-stamp")" = "$stamp_text" ] &&
   [ -f "$prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] && [ "${PCNN_KOKKOS_FORCE:-0}" != 1 ]; then
  say "$prefix already holds Kokkos ($flavor); nothing to do"
  exit 0
fi

# ---- 2. the source tarball: cache, else Debian's source package ----------------------------------
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  die "need root for: $*"; fi; }

ensure_deb_src() {
  # A deb-src entry mirroring the machine's own deb entries, so no mirror is named here.
  if grep -qs -e '^deb-src ' -e '^Types:.*deb-src' /etc/apt/sources.list \
       /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
    return
  fi
  local tmp; tmp=$(mktemp)
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$tmp"
    as_root cp "$tmp" /etc/apt/sources.list.d/pcnn-deb-src.sources
  elif grep -qs '^deb ' /etc/apt/sources.list; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$tmp"
    as_root cp "$tmp" /etc/apt/sources.list.d/pcnn-deb-src.list
  else
    die "no apt sources to derive a deb-src entry from"
  fi
  rm -f "$tmp"
  say "added a deb-src entry; running apt-get update"
  as_root apt-get update -qq
}

mkdir -p "$src_cache"
if [ ! -f "$kokkos_src/.pcnn-extracted" ]; then
  if [ ! -f "$src_cache/$tarball" ]; then
    ensure_deb_src
    say "downloading Debian's trilinos source package (166 MB) into $src_cache"
    (cd "$src_cache" && apt-get source --download-only trilinos) ||
      { as_root apt-get update -qq && (cd "$src_cache" && apt-get source --download-only trilinos); }
    [ -f "$src_cache/$tarball" ] || die "apt-get source did not produce $tarball"
  fi
  # The .dsc (when present) names the tarball's SHA-256: a cached copy must still match it.
  dsc=$(ls "$src_cache"/trilinos_13.2.0-*.dsc 2>/dev/null | head -n1 || true)
  if [ -n "$dsc" ]; then
    want=$(awk '/^Checksums-Sha256:/{f=1;next} f&&/^ /{print} f&&!/^ /{f=0}' "$dsc" |
           awk -v t="$tarball" '$3==t{print $1}')
    have=$(sha256sum "$src_cache/$tarball" | cut -d' ' -f1)
    [ -z "$want" ] || [ "$want" = "$have" ] || die "$tarball does not match $(basename "$dsc")"
  fi
  say "extracting packages/kokkos from $tarball"
  rm -rf "$kokkos_src" "$kokkos_src.tmp"
  mkdir -p "$kokkos_src.tmp"
  tar -xzf "$src_cache/$tarball" -C "$kokkos_src.tmp" --strip-components=3 \
      --wildcards '*/packages/kokkos/*'
  grep -q '3.4.01' "$kokkos_src.tmp/master_history.txt" || die "unexpected Kokkos version"
  touch "$kokkos_src.tmp/.pcnn-extracted"
  mv "$kokkos_src.tmp" "$kokkos_src"
fi

# ---- 3. patches for CUDA 13 and Hopper (harmless for the host build) ----------------------------
patch_sum=$(sha256sum "$patch_file" | cut -d' ' -f1)
if [ "$(cat "$kokkos_src/.pcnn-patched" 2>/dev/null || true)" != "$patch_sum" ]; then
  [ ! -f "$kokkos_src/.pcnn-patched" ] ||
    die "$kokkos_src carries an older patch: remove it and run again"
  say "applying $(basename "$patch_file")"
  patch -p1 --forward --silent -d "$kokkos_src" < "$patch_file"
  echo "$patch_sum" > "$kokkos_src/.pcnn-patched"
fi

# ---- 4. configure, build, install ---------------------------------------------------------------
build_dir=$repo/.deps/build-kokkos-$flavor
rm -rf "$build_dir"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
start=$(date +%s)
say "configuring ($flavor) in $build_dir"
cmake -S "$kokkos_src" -B "$build_dir" "${generator[@]}" "${compiler[@]}" "${options[@]}" \
      -DCMAKE_INSTALL_PREFIX="$prefix" > "$build_dir.log" 2>&1 ||
  { tail -n 30 "$build_dir.log"; die "configure failed (log: $build_dir.log)"; }
say "building with $jobs jobs"
cmake --build "$build_dir" -j "$jobs" >> "$build_dir.log" 2>&1 ||
  { tail -n 30 "$build_dir.log"; die "build failed (log: $build_dir.log)"; }
rm -rf "$prefix"
cmake --install "$build_dir" >> "$build_dir.log" 2>&1 || die "install failed (log: $build_dir.log)"

if [ "$flavor" = cuda ]; then
  # The installed config names the wrapper of the source tree; point it at the installed copy so
  # the prefix can be carried to another machine as it is.
  sed -i 's|^SET(Kokkos_CXX_COMPILER ".*nvcc_wrapper")|SET(Kokkos_CXX_COMPILER "${CMAKE_CURRENT_LIST_DIR}/../../../bin/nvcc_wrapper")|' \
      "$prefix/lib/cmake/Kokkos/KokkosConfigCommon.cmake"
fi
echo "$stamp_text" > "$prefix/.pcnn-kokkos-stamp"
rm -rf "$build_dir"
say "installed Kokkos ($flavor) into $prefix in $(( $(date +%s) - start )) s ($(du -sh "$prefix" | cut -f1))"
