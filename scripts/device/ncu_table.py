#!/usr/bin/env python3
"""Where a training step's time goes: one markdown table per ncu CSV written by
profile_kernels.sh (one row per kernel of one step, in launch order), with each kernel's distance
from the arithmetic and memory limits.

Usage: ncu_table.py [--peak-tflops 66.9] [--peak-tensor-tflops 989] [--peak-gbps 4300]
                    ncu_BACKEND_MODEL_BATCH.csv[.gz] ...

FLOPs are counted from the fp32 instructions ncu saw (2 per FFMA, 1 per FADD/FMUL, per thread),
so they include any arithmetic a kernel does beyond the model's multiply-adds. The default peaks
are the H200's: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz, and the ~4.3 TB/s device-to-device copy
rate measured on these machines (KINDS.md); 'SOL' columns are ncu's own percentages of peak
(compute: the busiest SM pipeline; memory: the busiest of DRAM, L2 and L1). Tensor FLOPs are
4096 per warp instruction on the HMMA pipe (mma.sync m16n8k16, the only tensor-core instruction
the kernels issue), against the dense bf16 / fp16 peak of the H100 / H200 SXM (989 TFLOP/s,
NVIDIA's data sheet); 'tensor pipe %' is ncu's own share of cycles the HMMA pipe was busy.
"""
import csv
import gzip
import io
import os
import re
import sys
from collections import OrderedDict


def read_kernels(path):
    """[(id, name, {metric: value})] in launch order."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = [l for l in f if l.startswith('"')]  # the program's own output is not CSV
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    kernels = OrderedDict()
    for r in rows:
        k = kernels.setdefault(int(r["ID"]), {"name": r["Kernel Name"], "m": {}})
        v = r["Metric Value"].replace(",", "")
        try:
            k["m"][r["Metric Name"]] = float(v)
        except ValueError:
            k["m"][r["Metric Name"]] = v
    return [(i, k["name"], k["m"]) for i, k in kernels.items()]


def short(name):
    """conv2d_forward_kernel_tiled<4, 2, 5>, gemm_kernel_tiled<16x16x32, LinearForward, ...>"""
    for junk in ("(anonymous namespace)::", "<unnamed>::", "unnamed>::", "void "):
        name = name.replace(junk, "")
    depth, out = 0, ""
    for ch in name:  # cut the argument list (the first parenthesis outside template brackets)
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        out += ch
    out = re.sub(r"TileConfig<(\d+), (\d+), (\d+), \d+, \d+>", r"\1x\2x\3", out)
    out = out.replace("Problem", "").split("::")[-1].strip() if "<" not in out.split("::")[-1] \
        else out.replace("Problem", "").strip()
    return out[:72]


def one_step(kernels):
    """The shortest repeating period of launches (one training step), averaged over periods."""
    keys = [(n, m.get("launch__grid_size"), m.get("launch__block_size")) for _, n, m in kernels]
    n = len(keys)
    period = n
    for p in range(1, n // 2 + 1):
        if all(keys[i] == keys[i + p] for i in range(n - p)):
            period = p
            break
    reps = n // period
    step = []
    for j in range(period):
        group = [kernels[j + r * period] for r in range(reps)]
        m = dict(group[0][2])
        for key in ("gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                    "dram__bytes_read.sum", "dram__bytes_write.sum",
                    "sm__warps_active.avg.pct_of_peak_sustained_active",
                    "smsp__inst_executed_pipe_tensor_op_hmma.sum",
                    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"):
            vals = [g[2].get(key, 0.0) for g in group if isinstance(g[2].get(key), float)]
            if vals:
                m[key] = sum(vals) / len(vals)
        step.append((group[0][1], m))
    # Start the step at the batch gather when there is one.
    for j, (name, _) in enumerate(step):
        if "gather" in name:
            step = step[j:] + step[:j]
            break
    return step, reps


def table(path, peak_tflops, peak_gbps, peak_tensor):
    kernels = read_kernels(path)
    if not kernels:
        return f"### {os.path.basename(path)}\n\nno kernels recorded\n"
    step, reps = one_step(kernels)
    total_ns = sum(m.get("gpu__time_duration.sum", 0.0) for _, m in step)
    title = os.path.basename(path).replace("ncu_", "").replace(".gz", "").replace(".csv", "").replace("_", " ")
    out = [f"### {title}: {len(step)} kernels a step, {total_ns / 1e3:.1f} us summed "
           f"(ncu, kernels serialised; mean of {reps} steps)\n",
           "| # | kernel | grid x block | regs | time us | % step | GFLOP/s | % fp32 peak | "
           "tensor GFLOP/s | % tensor peak | tensor pipe % | "
           "DRAM GB/s | % copy BW | SOL compute % | SOL memory % | occupancy % |",
           "|" + " --- |" * 16]
    for j, (name, m) in enumerate(step, 1):
        t = m.get("gpu__time_duration.sum", 0.0) * 1e-9
        flops = (2 * m.get("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0.0)
                 + m.get("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0.0)
                 + m.get("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0.0))
        # mma.sync m16n8k16 (the only tensor-core instruction the kernels issue): 2 x 16 x 8 x 16
        # FLOPs a warp instruction on the HMMA pipe.
        tensor = 4096 * m.get("smsp__inst_executed_pipe_tensor_op_hmma.sum", 0.0)
        tgf = tensor / t * 1e-9 if t else 0.0
        dram = m.get("dram__bytes_read.sum", 0.0) + m.get("dram__bytes_write.sum", 0.0)
        gf = flops / t * 1e-9 if t else 0.0
        gbps = dram / t * 1e-9 if t else 0.0
        out.append(
            f"| {j} | {short(name)} | {int(m.get('launch__grid_size', 0))} x "
            f"{int(m.get('launch__block_size', 0))} | {int(m.get('launch__registers_per_thread', 0))} | "
            f"{t * 1e6:.2f} | {100 * t * 1e9 / total_ns:.1f} | {gf:.0f} | "
            f"{100 * gf / (peak_tflops * 1e3):.1f} | {tgf:.0f} | "
            f"{100 * tgf / (peak_tensor * 1e3):.1f} | "
            f"{m.get('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active', 0.0):.1f} | "
            f"{gbps:.0f} | {100 * gbps / peak_gbps:.1f} | "
            f"{m.get('sm__throughput.avg.pct_of_peak_sustained_elapsed', 0.0):.1f} | "
            f"{m.get('gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed', 0.0):.1f} | "
            f"{m.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0.0):.1f} |")
    return "\n".join(out) + "\n"


def main(argv):
    peak_tflops, peak_gbps, peak_tensor, paths = 66.9, 4300.0, 989.0, []
    i = 0
    while i < len(argv):
        if argv[i] == "--peak-tflops":
            peak_tflops = float(argv[i + 1]); i += 2
        elif argv[i] == "--peak-tensor-tflops":
            peak_tensor = float(argv[i + 1]); i += 2
        elif argv[i] == "--peak-gbps":
            peak_gbps = float(argv[i + 1]); i += 2
        else:
            paths.append(argv[i]); i += 1
    if not paths:
        print(__doc__)
        return 2
    for p in paths:
        print(table(p, peak_tflops, peak_gbps, peak_tensor))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
