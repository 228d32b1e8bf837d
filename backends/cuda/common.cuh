// Small device and launch helpers shared by the cuda backend's kernels: grid sizing, alignment
// tests and a deterministic block-wide sum.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace pcnn::cuda {

inline int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// Blocks for a grid-stride loop over n items: enough to fill the GPU a few times, no more.
inline int grid_for(size_t n, int threads, int sm_count) {
  const long long want = (static_cast<long long>(n) + threads - 1) / threads;
  const long long cap = static_cast<long long>(sm_count) * 8;
  return int(want < 1 ? 1 : (want > cap ? cap : want));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Staging global -> shared without a register round trip (cp.async): a thread can have all of
// its copies in flight at once, so staging costs about one memory latency, not one per element.
__device__ __forceinline__ void copy_async(float* dst_shared, const float* src_global) {
  __pipeline_memcpy_async(dst_shared, src_global, sizeof(float));
}
// Waits for this thread's copies; a __syncthreads() must follow before others read them.
__device__ __forceinline__ void copy_async_wait() {
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

// Sum over the block, the same order every run; every thread must call it. `red` holds 32 T.
template <class T>
__device__ inline T block_sum(T v, T* red) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // red may still be read by a previous call
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  T total = T(0);
  if (threadIdx.x == 0)
    for (int i = 0; i < warps; ++i) total += red[i];
  return total;  // valid in thread 0 only
}

}  // namespace pcnn::cuda
