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

# lab_session DIR BUILD TARGET...: the start of a one-call lab check (lanes_check.sh,
# switch_check.sh): results in DIR, packed with summary.log into $final when the script ends,
# log TEXT stamping a line into summary.log, the GPU named there, and a Release build of the
# tree without Kokkos in BUILD with only TARGETs built (exits on a configure or build error).
lab_session() {
  local dir=$1 build=$2; shift 2
  results_archive "$dir" results.tgz
  trap 'pack_results; cp "$out/summary.log" "$final/" 2>/dev/null' EXIT
  log() { echo "$(elapsed) $*" | tee -a "$out/summary.log"; }
  cmake_gpu_args "$PWD"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee -a "$out/summary.log"
  log "configure + build: $*"
  cmake -S . -B "$build" "${gpu_args[@]}" -DPCNN_ENABLE_KOKKOS=OFF > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target "$@" > "$out/build.log" 2>&1 ||
    { grep -B5 -A20 error "$out/build.log" | head -60; exit 1; }
}

# step_lab_checks BUILD VAR "VALUES" MODELS: the step lab (cuda; batch 64, 256, 1024, or the
# list in $STEP_BATCHES; fp32 and bf16) on MODELS under each value of VAR in turn, twice, then
# cuda and cudnn in the same run on both built-in models in fp32; all into summary.log (after
# lab_session).
step_lab_checks() {
  local build=$1 var=$2 values=$3 models=$4
  log "step lab, $models, $var = $values interleaved, twice"
  for round in 1 2; do
    for v in $values; do
      echo "$var=$v"
      env "$var=$v" timeout 60 "$build/bench/kernels/pcnn_step_lab" cuda --models "$models" \
        --batches "${STEP_BATCHES:-64,256,1024}" --precisions fp32,bf16 --graph-only 2>&1 |
        grep "^cuda"
    done
  done | tee -a "$out/summary.log"
  log "step lab, cuda and cudnn in the same run"
  timeout 150 "$build/bench/kernels/pcnn_step_lab" --models lenet5,simard2003 \
    --batches 64,256,1024 --precisions fp32 --graph-only 2>&1 | tee -a "$out/summary.log"
}

# recipe_fast_runs BUILD "SEEDS" [VAR "VALUES"]: `pcnn train --backend cuda --recipe fast` on the
# carried Fashion-MNIST (nothing without it), once a seed, under each value of VAR in turn where
# VAR is given, the decoded-data cache filled first; a line a run in summary.log (accuracy,
# training time, wall time), each run's output with its --timings table in
# tta_SEED[_VALUE].log (after lab_session).
recipe_fast_runs() {
  local build=$1 seeds=$2 var=${3:-} values=${4:-} seed v tag name list
  [ -d .deps/device/fashion-mnist ] || return 0
  local data=(--data .deps/device/fashion-mnist)
  log "--recipe fast, seeds $seeds${var:+, under each value of $var in turn}"
  "$build/pcnn" train "${data[@]}" --backend cuda --epochs 1 --limit 1000 -q > /dev/null 2>&1
  list=${var:+$values}  # without VAR, one run a seed ("-")
  for seed in $seeds; do
    for v in ${list:--}; do
      if [ -n "$var" ]; then tag="_$v" name=", $var=$v"; else tag="" name=""; fi
      env ${var:+"$var=$v"} /usr/bin/time -f "wall %e s" "$build/pcnn" train "${data[@]}" \
        --backend cuda --recipe fast --seed "$seed" --quiet --timings \
        > "$out/tta_$seed$tag.log" 2>&1
      log "  seed $seed$name: $(grep final "$out/tta_$seed$tag.log" | cut -c1-40);" \
        "training $(grep '^training' "$out/tta_$seed$tag.log" | awk '{print $NF}') s;" \
        "$(grep wall "$out/tta_$seed$tag.log")"
    done
  done
}

