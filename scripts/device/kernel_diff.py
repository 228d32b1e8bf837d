#!/usr/bin/env python3
"""One step's kernels from two ncu CSVs of kernel_diff.sh, side by side: name and time (us)
before and after, in launch order, and the step totals.

Usage: kernel_diff.py BEFORE.csv AFTER.csv
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_table import one_step, read_kernels, short  # noqa: E402

T = "gpu__time_duration.sum"


def main(before_path, after_path):
    sides = [one_step(read_kernels(p))[0] for p in (before_path, after_path)]
    print(f"{'#':>3}  {'before':<52}{'us':>8}   {'after':<52}{'us':>8}")
    for i in range(max(len(s) for s in sides)):
        cells = []
        for s in sides:
            if i < len(s):
                cells.append((short(s[i][0])[:50], s[i][1].get(T, 0.0) / 1e3))
            else:
                cells.append(("", 0.0))
        print(f"{i:>3}  {cells[0][0]:<52}{cells[0][1]:>8.2f}   {cells[1][0]:<52}{cells[1][1]:>8.2f}")
    totals = [sum(m.get(T, 0.0) for _, m in s) / 1e3 for s in sides]
    print(f"step: {len(sides[0])} kernels {totals[0]:.1f} us before, "
          f"{len(sides[1])} kernels {totals[1]:.1f} us after")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
