// check_step of the cuda backend (cudnn inherits it): one launch finds the lowest index of a
// non-finite gradient (block minima, reduced by the last block to finish, which also finishes
// the check), with no host read-back and no allocation after the first call, so the whole
// training step stays one capturable graph. (Two launches, reduce then finish, cost 4-6 us a
// step on the H200: notes/measurements.md.)
#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/step_check_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kThreads = 256;  // a multiple of 32: every warp is full
constexpr int kPerRound = 4;   // loads a thread has in flight

// The minimum of v over the block; valid in thread 0. Every thread of the block must call it.
__device__ uint32_t block_min(uint32_t v) {
  __shared__ uint32_t warp_min[kThreads / 32];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = min(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_min[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? warp_min[lane] : kAllFinite;
    for (int offset = 16; offset > 0; offset >>= 1)
      v = min(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  return v;
}

// grads (n) -> the step's verdict in metrics and hyper (core/step_check_math.hpp), in one
// launch: each block writes the lowest non-finite index it saw (or kAllFinite) to
// partial[blockIdx.x]; the last block to finish (counted in *counter, which it puts back to
// zero for the next replay) reduces the partials and finishes the check. A thread's indices
// rise, so its first fault is its lowest and it stops there; it loads kPerRound of them at a
// time, so that a grid of one block a multiprocessor (fewer blocks counting in on one counter)
// still waits for one load round trip, not kPerRound.
__global__ void check_step_kernel(size_t n, const float* grads, uint32_t* partial,
                                  unsigned* counter, const int32_t* step, float* metrics,
                                  float* hyper) {
  wait_for_previous_kernel();
  uint32_t lowest = kAllFinite;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t base = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
       base < n && lowest == kAllFinite; base += kPerRound * stride) {
    float g[kPerRound];
#pragma unroll
    for (int u = 0; u < kPerRound; ++u) {
      const size_t i = base + u * stride;
      g[u] = i < n ? grads[i] : 0.f;
    }
#pragma unroll
    for (int u = 0; u < kPerRound; ++u)
      if (lowest == kAllFinite && !is_finite_float(g[u])) lowest = uint32_t(base + u * stride);
  }
  lowest = block_min(lowest);
  if (threadIdx.x == 0) partial[blockIdx.x] = lowest;
  if (!last_block_done(counter, gridDim.x)) return;
  lowest = kAllFinite;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads)
    lowest = min(lowest, __ldcg(&partial[b]));  // L2, not a stale L1 line
  lowest = block_min(lowest);
  if (threadIdx.x == 0) {
    finish_step_check(lowest, *step, metrics, hyper);
  }
}

}  // namespace

}  // namespace cuda

void CudaBackend::check_step(size_t n, const float* grads, const int32_t* step, float* metrics,
                             float* hyper) {
  ctx_.bind();
  // One block a multiprocessor at most, so that fewer blocks count in on the one counter (Simard
  // 2003's 130k parameters: 518 blocks of one value a thread took 6.1 us, ncu, H100).
  const int blocks = std::min(cuda::grid_for(n, cuda::kThreads, ctx_.sm_count()), ctx_.sm_count());
  // uint32 partials in the float scratch (same size); sized by the eager first step
  auto* partial = reinterpret_cast<uint32_t*>(ctx_.scratch(size_t(blocks)));
  cuda::launch(ctx_, "check_step_kernel", cuda::check_step_kernel, blocks, cuda::kThreads, 0, n,
               grads, partial, ctx_.counters(1), step, metrics, hyper);
}

}  // namespace pcnn
