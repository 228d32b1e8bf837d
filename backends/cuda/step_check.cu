// check_step of the cuda backend (cudnn inherits it), alone or with the update after it
// (checked_update): one launch finds the lowest index of a non-finite gradient (block minima,
// reduced by the last block to finish, which also finishes the check), with no host read-back and no allocation after the first call, so the whole
// training step stays one capturable graph. (Two launches, reduce then finish, cost 4-6 us a
// step on the H200: notes/measurements.md.)
#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/optimizer_loops.cuh"
#include "core/optimizer_math.hpp"
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

// The lowest index of a non-finite gradient among this block's share of grads (n), or
// kAllFinite; valid in thread 0, and every thread of the block must call it. A thread's indices
// rise, so its first fault is its lowest and it stops there; it loads kPerRound of them at a
// time, so that a grid of one block a multiprocessor (fewer blocks counting in on one counter)
// still waits for one load round trip, not kPerRound.
__device__ uint32_t block_lowest_fault(size_t n, const float* grads) {
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
  return block_min(lowest);
}

// Called by every thread of the block that counted in last: the lowest of the blocks' partials
// (written before their counts), then the step's verdict into metrics and hyper
// (core/step_check_math.hpp).
__device__ void finish_check(const uint32_t* partial, const int32_t* step, float* metrics,
                             float* hyper) {
  __threadfence();
  uint32_t lowest = kAllFinite;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads)
    lowest = min(lowest, __ldcg(&partial[b]));  // L2, not a stale L1 line
  lowest = block_min(lowest);
  if (threadIdx.x == 0) finish_step_check(lowest, *step, metrics, hyper);
}

// Thread 0: puts this block's lowest fault in partial and counts it in; true for the last.
__device__ bool count_in(uint32_t lowest, uint32_t* partial, unsigned* counter) {
  partial[blockIdx.x] = lowest;
  __threadfence();  // the partial is visible before the count says so
  return atomicAdd(counter, 1u) == gridDim.x - 1;
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
  const uint32_t lowest = block_lowest_fault(n, grads);
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = count_in(lowest, partial, counter);
  __syncthreads();
  if (!is_last) return;
  finish_check(partial, step, metrics, hyper);
  if (threadIdx.x == 0) *counter = 0u;  // ready for the next launch (graph replays)
}

// check_step, the optimizer's update and the counter's increment in one launch
// (checked_update). The blocks check their share of the gradients and count in; the last
// finishes the check (as check_step_kernel) and raises sync[1]; every block waits for that flag,
// reads the verdict from hyper and updates its share of the parameters (optimizer_loops.cuh);
// the last to count out (sync[2]) advances the counter and lowers the flags for the next
// replay. The wait needs every block resident at once: the grid is at most one block a
// multiprocessor, and no later kernel starts before all of them have exited (launch.cuh).
template <bool Adam, bool Vec4>
__global__ void checked_update_kernel(size_t n, float* p, const float* g, float* s1, float* s2,
                                      const int32_t* step, float* metrics, float* hyper,
                                      int32_t* advance, uint32_t* partial, unsigned* sync) {
  wait_for_previous_kernel();
  const uint32_t lowest = block_lowest_fault(n, g);
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = count_in(lowest, partial, &sync[0]);
  __syncthreads();
  if (is_last) {
    finish_check(partial, step, metrics, hyper);
    if (threadIdx.x == 0) {
      sync[0] = 0u;
      __threadfence();  // the verdict is visible before the flag says so
      atomicExch(&sync[1], 1u);
    }
  }
  __shared__ SgdHyper sgd;
  __shared__ AdamHyper adam;
  if (threadIdx.x == 0) {
    while (*reinterpret_cast<volatile unsigned*>(&sync[1]) == 0u) __nanosleep(64);
    __threadfence();
    float h[kHyperCount];  // from L2: this multiprocessor's L1 may not have seen the verdict
    for (int i = 0; i < kHyperCount; ++i) h[i] = __ldcg(&hyper[i]);
    if (Adam)
      adam = AdamHyper::from(h, __ldcg(step));
    else
      sgd = SgdHyper::from(h);
  }
  __syncthreads();
  if (Adam && !adam.skip) adam_share<Vec4>(adam, n, p, g, s1, s2);
  if (!Adam && !sgd.skip) sgd_share<Vec4>(sgd, n, p, g, s1);
  __syncthreads();  // the block's reads of step are done
  if (threadIdx.x == 0 && atomicAdd(&sync[2], 1u) == gridDim.x - 1) {
    sync[1] = 0u;
    sync[2] = 0u;
    if (advance) *advance += 1;
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

void CudaBackend::checked_update(bool adam, size_t n, float* params, const float* grads,
                                 float* state1, float* state2, const int32_t* step,
                                 float* metrics, float* hyper, int32_t* advance) {
  if (!ctx_.fused_update() || n == 0) {
    Backend::checked_update(adam, n, params, grads, state1, state2, step, metrics, hyper,
                            advance);
    return;
  }
  ctx_.bind();
  const bool vec4 = cuda::aligned16(params) && cuda::aligned16(grads) &&
                    cuda::aligned16(state1) && (!adam || cuda::aligned16(state2));
  // one block a multiprocessor at most: every block must be resident while they wait
  const int blocks = std::min(cuda::grid_for(vec4 ? n / 4 + 1 : n, cuda::kThreads,
                                             ctx_.sm_count()),
                              ctx_.sm_count());
  auto* partial = reinterpret_cast<uint32_t*>(ctx_.scratch(size_t(blocks)));
  const auto kernel = adam ? (vec4 ? cuda::checked_update_kernel<true, true>
                                   : cuda::checked_update_kernel<true, false>)
                           : (vec4 ? cuda::checked_update_kernel<false, true>
                                   : cuda::checked_update_kernel<false, false>);
  cuda::launch(ctx_, "checked_update_kernel", kernel, blocks, cuda::kThreads, 0, n, params,
               grads, state1, state2, step, metrics, hyper, advance, partial, ctx_.counters(3));
}

}  // namespace pcnn
