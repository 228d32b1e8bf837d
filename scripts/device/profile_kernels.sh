#!/usr/bin/env bash
# Runs on the GPU machine: where a training step's time goes, kernel by kernel, read off the
# hardware counters with Nsight Compute (ncu). The step lab runs eager steps (no graph, so each
# kernel is its own launch); ncu skips the warm-up and records a few whole steps. Clocks and
# caches are left as they are (--clock-control none --cache-control none): the numbers are what
# a kernel costs inside a running step, not from a flushed cache.
# Usage: scripts/device/profile_kernels.sh BUILD_DIR OUT_DIR [backend:model:batch[:precision] ...]
# (model: a built-in name or a JSON file; precision: fp32, the default, bf16 or fp16)
# Then, on any machine: python3 scripts/device/ncu_table.py OUT_DIR/ncu_*.csv
set -uo pipefail
build=$1 out=$2; shift 2
cases=${*:-"cuda:lenet5:64 cuda:lenet5:1024 cuda:simard2003:64 cuda:simard2003:1024 cudnn:lenet5:64 cudnn:lenet5:1024"}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -x "$ncu" ] || { echo "profile_kernels: ncu not found"; exit 1; }
mkdir -p "$out"
# Time, the two speed-of-light percentages ncu reports (compute: the busiest SM pipe; memory:
# the busiest of DRAM, L2, L1), DRAM bytes, the fp32 instructions that carry the arithmetic
# (FLOPs = 2 FFMA + FADD + FMUL, per thread), occupancy and the launch shape.
metrics=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
metrics+=,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
metrics+=,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum
metrics+=,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__grid_size,launch__block_size,launch__registers_per_thread
metrics+=,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static
# The tensor-core kernels' warp instructions on the HMMA pipe and its busy share, where this ncu
# knows them (names vary between versions: a wrong one would fail the whole run).
known=$("$ncu" --query-metrics 2>/dev/null)
for m in smsp__inst_executed_pipe_tensor_op_hmma.sum \
         sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active; do
  grep -q "^${m%%.*} " <<<"$known" && metrics+=",$m" || echo "profile_kernels: no ${m%%.*} here"
done
for c in $cases; do
  IFS=: read -r backend model batch precision <<<"$c"
  precision=${precision:-fp32}
  tag=$(basename "$model" .json)  # a model may be a JSON file: its name, not its path
  [ "$precision" = fp32 ] || tag+="_$precision"
  # cuda runs 14 (lenet5) or 12 kernels a step; cudnn more. Skip the warm-up, record >= 2 steps.
  count=40; [ "$backend" = cudnn ] && count=140  # cudnn: 46 kernels a LeNet-5 step
  [ "$precision" = fp32 ] || count=$((count * 2))  # 16 bits: conversions between layers too
  echo "== $backend $model $batch $precision"
  timeout 150 "$ncu" --clock-control none --cache-control none --launch-skip 600 \
    --launch-count $count --metrics "$metrics" --csv --print-units base \
    "$build/bench/kernels/pcnn_step_lab" "$backend" "$model" "$batch" 200 "$precision" \
    > "$out/ncu_${backend}_${tag}_${batch}.csv" 2> "$out/ncu_${backend}_${tag}_${batch}.err"
  echo "exit $?; $(grep -c gpu__time_duration "$out/ncu_${backend}_${tag}_${batch}.csv") kernels"
  tail -2 "$out/ncu_${backend}_${tag}_${batch}.err"
done
