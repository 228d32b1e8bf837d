// An im2col offset table read NR lanes at a time, described as runs of consecutive offsets, so
// that a panel row can be filled (or scattered back) with a few masked vector loads instead of
// a hardware gather (a 16-lane gather costs ~40 cycles on Zen 4; the masked loads a few).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/openmp/gemm_block.hpp"

namespace pcnn::omp {

// The lanes of one NR-wide chunk of an offset table: lane j of run r is offset start[r] + j,
// for the lanes set in mask[r]. Lanes past the table's end belong to no run.
struct ChunkRuns {
  int count = 0;
  int start[kGemmNR];
  uint32_t mask[kGemmNR];
};

// Runs of every chunk [16c, 16c + 16) of off[0..n).
inline std::vector<ChunkRuns> chunk_runs(const int* off, int n) {
  std::vector<ChunkRuns> out(size_t((n + kGemmNR - 1) / kGemmNR));
  for (size_t c = 0; c < out.size(); ++c) {
    const int* o = off + c * kGemmNR;
    const int lanes = std::min(kGemmNR, n - int(c) * kGemmNR);
    ChunkRuns& r = out[c];
    for (int j = 0; j < lanes;) {
      int end = j + 1;
      while (end < lanes && o[end] == o[end - 1] + 1) ++end;
      r.start[r.count] = o[j] - j;
      r.mask[r.count] = ((1u << end) - 1u) & ~((1u << j) - 1u);
      ++r.count;
      j = end;
    }
  }
  return out;
}

}  // namespace pcnn::omp
