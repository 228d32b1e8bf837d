# Sourced by the scripts in scripts/device/ (they run on the GPU machine, from the repository
# root): what more than one of them does the same way.

# results_folder DIR ARCHIVE: a fresh DIR becomes $OUT for this script and what it starts; the
# caller's $OUT (the device tool's folder; /tmp without one) is kept as $final and ARCHIVE is
# the archive pack_results writes there. Also starts the clock elapsed reads.
results_folder() {
  final=${OUT:-/tmp}
  out=$1
  archive=$2
  rm -rf "$out" && mkdir -p "$out"
  export OUT=$out
  t0=$(date +%s)
}

# Packs the results folder into $final/$archive (the device tool hands back only a few files).
pack_results() { tar czf "$final/$archive" -C "$out" . ; }

# results_archive DIR ARCHIVE: results_folder, and the archive packed when the script ends;
# phase TEXT stamps a line and packs what is there so far, so a call the device tool cuts short
# still returns what was done.
results_archive() {
  results_folder "$1" "$2"
  trap pack_results EXIT
}
phase() { echo "$(elapsed) $*"; pack_results 2>/dev/null; }

# "[Ns]": the seconds since results_folder, to stamp a log line.
elapsed() { echo "[$(( $(date +%s) - t0 ))s]"; }

# cmake_gpu_args SRC: the configure options of a GPU build of the tree at SRC, into the array
# gpu_args (header-only libraries and the ONNX node cases carried in .deps/device; Kokkos-CUDA
# when it was carried too).
cmake_gpu_args() {
  gpu_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DPCNN_EXTRA_INCLUDE_DIR="$1/.deps/device/include"
            -DPCNN_ONNX_NODE_DIR="$1/.deps/device/onnx-node")
  [ -d "$1/.deps/kokkos-cuda" ] && gpu_args+=(-DPCNN_KOKKOS_FLAVOR=cuda)
  return 0
}

# bench_backends LISTING: the backends a whole bench runs, given what `pcnn backends` printed
# (kokkos only where it was built).
bench_backends() {
  if grep -q "^kokkos " <<<"$1"; then echo serial,openmp,kokkos,cudnn,cuda
  else echo serial,openmp,cudnn,cuda; fi
}
