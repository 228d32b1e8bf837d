// Launch geometry shared by this folder's small kernels: grid-stride loops over flat arrays.
#pragma once

#include <cstddef>

namespace pcnn::vendor {

constexpr int kThreads = 256;

// Enough blocks to cover n once, capped so huge arrays loop instead of launching millions.
inline unsigned grid_for(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < (size_t(1) << 16) ? (blocks ? blocks : 1) : (size_t(1) << 16));
}

}  // namespace pcnn::vendor

// for (i in [0, n)) spread over the whole grid.
#define PCNN_GRID_STRIDE_LOOP(i, n)                                                \
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);         \
       i += size_t(gridDim.x) * blockDim.x)
