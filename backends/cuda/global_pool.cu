// Global average pooling of the cuda backend (cudnn inherits it). Forward: one warp per (n, c)
// plane, lanes striding the plane and a fixed shuffle tree (the same order every run; another
// order than serial's, within kSum). Backward: one thread per input element.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kThreads = 256, kWarpsPerBlock = kThreads / 32;

// x (planes, HW) -> y (planes) = mean; warp w of the grid takes planes w, w + warps, ...
__global__ void global_avg_pool_forward_kernel_warp(size_t planes, int HW, float inv,
                                                    const float* x, float* y) {
  wait_for_previous_kernel();
  const int lane = threadIdx.x & 31;
  const size_t warps = size_t(gridDim.x) * kWarpsPerBlock;
  for (size_t plane = size_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5); plane < planes;
       plane += warps) {
    const float* xi = x + plane * HW;
    float acc = 0.f;
    for (int i = lane; i < HW; i += 32) acc += xi[i];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[plane] = acc * inv;
  }
}

// dy (planes) -> dx (planes, HW) = dy * inv
__global__ void global_avg_pool_backward_kernel_plain(size_t total, int HW, float inv,
                                                      const float* dy, float* dx) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    dx[i] = dy[i / HW] * inv;
}

}  // namespace

}  // namespace cuda

// x (N,C,HW) -> y (N,C)
void CudaBackend::global_avg_pool_forward(int N, int C, int HW, const float* x, float* y) {
  ctx_.bind();
  const size_t planes = size_t(N) * C;
  if (planes == 0 || HW <= 0) return;
  // Every warp of a block has a plane or none: the loop's condition is uniform per warp, so the
  // full-mask shuffles never run with lanes missing.
  const int blocks = cuda::grid_for(planes * 32, cuda::kThreads, ctx_.sm_count());
  cuda::launch(ctx_, "global_avg_pool_forward_kernel_warp",
               cuda::global_avg_pool_forward_kernel_warp, blocks, cuda::kThreads, 0, planes, HW,
               1.f / float(HW), x, y);
}

// dy (N,C) -> dx (N,C,HW)
void CudaBackend::global_avg_pool_backward(int N, int C, int HW, const float* dy, float* dx) {
  ctx_.bind();
  const size_t total = size_t(N) * C * HW;
  if (total == 0) return;
  cuda::launch(ctx_, "global_avg_pool_backward_kernel_plain",
               cuda::global_avg_pool_backward_kernel_plain,
               cuda::grid_for(total, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, total, HW,
               1.f / float(HW), dy, dx);
}

}  // namespace pcnn
